import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Orm } from '../db/orm.js';
import { createLogger } from '../logger.js';
import type { TestDatabase } from '../testing/database.js';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.js';
import type { EventBus } from './bus.js';
import { NatsEventBus } from './nats-bus.js';
import { OutboxRelay } from './outbox-relay.js';
import { createOutboxDatabase, openOutboxOrm, writeEvents } from '../../test/support/outbox.js';

// The whole path with NATS going away: service writes → outbox → relay → JetStream → consumer.
// A nats-server of our own, so stopping it disturbs nothing else.

const logger = createLogger({ service: 'nats-restart-test', level: 'silent' });

let nats: TestNatsServer;
let database: TestDatabase;
let orm: Orm;

beforeAll(async () => {
  [nats, database] = await Promise.all([startTestNatsServer(), createOutboxDatabase(logger)]);
  orm = await openOutboxOrm(database.url, logger);
});

afterAll(async () => {
  await orm?.close();
  await database?.drop();
  await nats?.dispose();
});

describe('outbox relay over NATS JetStream', () => {
  it('loses no event while NATS is stopped and restarted, and delivers them in order', async () => {
    const bus = await NatsEventBus.connect({ servers: nats.url, name: 'restart-test', logger, retry: { initialMs: 100, maxMs: 500 } });
    // The relay publishes through this view of the bus, which notes each publish the bus refused.
    const refused: string[] = [];
    let refusedThrice!: () => void;
    const retried = new Promise<void>((resolve) => (refusedThrice = resolve));
    const watched: EventBus = {
      system: bus.system,
      publish: (envelope, json, trace) =>
        bus.publish(envelope, json, trace).catch((error: unknown) => {
          if (refused.push(envelope.id) === 3) refusedThrice();
          throw error;
        }),
      async publishAll(events) {
        for (const event of events) await this.publish(event.envelope, event.json, event.trace);
      },
      subscribe: (consumer) => bus.subscribe(consumer),
      close: () => bus.close(),
    };
    const relay = new OutboxRelay({ orm, bus: watched, logger, retry: { initialMs: 50, maxMs: 500 } });
    const received: string[] = [];
    try {
      await bus.subscribe({
        name: 'restart-consumer',
        filter: 'events.>',
        concurrency: 1,
        handle: (envelope) => {
          received.push(envelope.id);
          return Promise.resolve();
        },
      });
      await relay.start();
      const before = await writeEvents(orm, 5);
      await vi.waitFor(() => expect(received).toEqual(before.map((event) => event.id)), { timeout: 5_000, interval: 20 });

      await nats.stop();
      // The service keeps committing while NATS is away; the relay keeps the rows and retries.
      const during = await writeEvents(orm, 20);
      await retried;
      // Refused again and again: the oldest row, retried, never a later one past it.
      expect(new Set(refused)).toEqual(new Set([during[0]!.id]));
      const [waiting] = await database.query<{ count: string }>('select count(*)::text as count from outbox where published_at is null');
      expect(Number(waiting!.count)).toBe(20);

      await nats.start();
      const after = await writeEvents(orm, 5);
      const expected = [...before, ...during, ...after].map((event) => event.id);
      // Until the last one arrives, then exactly these: a failure shows what was missing or repeated.
      await vi.waitFor(() => expect(received, `missing: ${expected.filter((id) => !received.includes(id)).join(' ')}`).toContain(expected.at(-1)), { timeout: 30_000, interval: 50 });
      expect(received).toEqual(expected);
    } finally {
      // Should the test fail during the outage: the bus's close does not return while NATS is away.
      await nats.start();
      await relay.stop();
      await bus.close();
    }
  }, 60_000);
});
