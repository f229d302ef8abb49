import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../testing/manual-clock.js';
import type { Orm } from '../db/orm.js';
import { createLogger } from '../logger.js';
import type { TestDatabase } from '../testing/database.js';
import type { EventBus } from './bus.js';
import { InProcessEventBus } from './in-process-bus.js';
import { OutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
import { createOutboxDatabase, openOutboxOrm, RecordingBus, writeEvents } from '../../test/support/outbox.js';

const logger = createLogger({ service: 'relay-test', level: 'silent' });
const waitFor = <T>(check: () => T | Promise<T>, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 20 });

let database: TestDatabase;
let orm: Orm;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  database = await createOutboxDatabase(logger);
  orm = await openOutboxOrm(database.url, logger);
});

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
  // Every test starts from an empty outbox: a row left by one test must not reach the next one's bus.
  await database.query('delete from outbox');
});

afterAll(async () => {
  await orm.close();
  await database.drop();
});

function startRelay(bus: EventBus, overrides: Partial<OutboxRelayOptions> = {}): OutboxRelay {
  const relay = new OutboxRelay({ orm, bus, logger, pollIntervalMs: 200, retry: { initialMs: 20, maxMs: 200 }, ...overrides });
  relays.push(relay);
  void relay.start();
  return relay;
}

async function unpublished(): Promise<number> {
  const [row] = await database.query<{ count: string }>('select count(*)::text as count from outbox where published_at is null');
  return Number(row!.count);
}

describe('OutboxRelay', () => {
  it('publishes rows oldest first, the exact recorded text, and stamps published_at', async () => {
    const bus = new RecordingBus();
    const events = await writeEvents(orm, 30);
    startRelay(bus);
    await waitFor(() => expect(bus.accepted).toHaveLength(30));
    expect(bus.ids()).toEqual(events.map((event) => event.id));
    await waitFor(async () => expect(await unpublished()).toBe(0));

    const [stored] = await database.query<{ text: string }>('select payload::text as text from outbox where id = $1', [events[0]!.id]);
    expect(bus.accepted[0]!.json).toBe(stored!.text);
    expect(bus.accepted[0]!.json).toBe(JSON.stringify(events[0]));
    expect(Object.keys(JSON.parse(bus.accepted[0]!.json) as object)).toEqual(['id', 'type', 'created_at', 'data', 'tenant_id', 'api_version']);
    expect(bus.accepted[0]!.envelope).toEqual(events[0]);
  });

  it('publishes a backlog as runs of at most batchSize rows, each run stamped once accepted', async () => {
    const bus = new RecordingBus();
    const events = await writeEvents(orm, 25);
    startRelay(bus, { batchSize: 10 });
    await waitFor(async () => expect(await unpublished()).toBe(0));
    expect(bus.runs).toEqual([10, 10, 5]);
    expect(bus.ids()).toEqual(events.map((event) => event.id));
  });

  it('wakes on the commit notification, not the poll: milliseconds from commit to publish', async () => {
    const bus = new RecordingBus();
    const relay = startRelay(bus, { pollIntervalMs: 30_000 });
    await waitFor(() => expect(relay.active).toBe(true));
    const latencies: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const committedAt = Date.now();
      const [event] = await writeEvents(orm, 1);
      await waitFor(() => expect(bus.ids()).toContain(event!.id), 2_000);
      latencies.push(bus.accepted.at(-1)!.at - committedAt);
    }
    expect(Math.max(...latencies)).toBeLessThan(250);
  });

  it('keeps every row while the bus rejects, accepts writes meanwhile, then publishes them in order once', async () => {
    const bus = new RecordingBus();
    let down = true;
    bus.rejectWhile = () => down;
    startRelay(bus);
    const events = await writeEvents(orm, 10);
    await waitFor(() => expect(bus.attempts).toBeGreaterThan(3));
    events.push(...(await writeEvents(orm, 10)));
    expect(bus.accepted).toEqual([]);
    expect(await unpublished()).toBe(20);

    down = false;
    await waitFor(() => expect(bus.accepted).toHaveLength(20));
    expect(bus.ids()).toEqual(events.map((event) => event.id));
    await waitFor(async () => expect(await unpublished()).toBe(0));
  });

  it('publishes from one relay per database; a stand-by takes over when the active one stops', async () => {
    const first = new RecordingBus();
    const second = new RecordingBus();
    const relayA = startRelay(first);
    const relayB = startRelay(second);
    await waitFor(() => expect([relayA.active, relayB.active].filter(Boolean)).toHaveLength(1));
    const events = await writeEvents(orm, 20);
    await waitFor(() => expect(first.accepted.length + second.accepted.length).toBe(20));
    const [active, activeBus, standBy, standByBus] = relayA.active ? [relayA, first, relayB, second] : [relayB, second, relayA, first];
    expect(activeBus.ids()).toEqual(events.map((event) => event.id));
    expect(standByBus.accepted).toEqual([]);

    await active.stop();
    await waitFor(() => expect(standBy.active).toBe(true), 3_000);
    const later = await writeEvents(orm, 5);
    await waitFor(() => expect(standByBus.ids()).toEqual(later.map((event) => event.id)));
    expect(activeBus.accepted).toHaveLength(20);
  });

  it('reconnects after its database connection is killed and publishes what was written meanwhile', async () => {
    const bus = new RecordingBus();
    const relay = startRelay(bus);
    await waitFor(() => expect(relay.active).toBe(true));
    const killed = await database.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'outbox-relay'",
      [database.name],
    );
    expect(killed).toHaveLength(1);
    const events = await writeEvents(orm, 5);
    await waitFor(() => expect(bus.ids()).toEqual(events.map((event) => event.id)));
    expect(relay.active).toBe(true);
  });

  it('stops within its bound even while a publish hangs, leaving the row unpublished', async () => {
    const bus = new RecordingBus();
    bus.hang = true;
    const relay = startRelay(bus, { stopTimeoutMs: 300 });
    await writeEvents(orm, 1);
    await waitFor(() => expect(bus.attempts).toBe(1));
    const started = Date.now();
    await relay.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await unpublished()).toBe(1);
  });

  it('with the in-process bus, keeps a row unpublished until every declared consumer has handled it', async () => {
    // The local mode across a restart: the process that wrote the event dies before the consumer
    // ran; the next process (a new bus and relay on the same database) delivers it.
    const clock = new ManualClock();
    const crashed = new InProcessEventBus({ consumers: ['dispatcher'], logger, subscribeTimeoutMs: 100, clock });
    const first = startRelay(crashed);
    const [event] = await writeEvents(orm, 1);
    // The relay's publish waits for 'dispatcher' to subscribe; past that bound the bus refuses it,
    // and the relay, keeping the row, publishes it again: refused twice, it is asked a third time.
    for (let refusal = 1; refusal <= 2; refusal += 1) {
      await clock.untilSleeping();
      clock.advance(100);
    }
    await clock.untilSleeping();
    expect(await unpublished()).toBe(1);
    // The process dies: its bus first, which ends the publish waiting on it, then its relay.
    await crashed.close();
    await first.stop();

    const bus = new InProcessEventBus({ consumers: ['dispatcher'], logger });
    const handled: string[] = [];
    await bus.subscribe({ name: 'dispatcher', filter: 'events.>', concurrency: 1, handle: (envelope) => Promise.resolve(void handled.push(envelope.id)) });
    startRelay(bus);
    await waitFor(() => expect(handled).toEqual([event!.id]));
    await waitFor(async () => expect(await unpublished()).toBe(0));
    await bus.close();
  });
});
