import { randomBytes } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../logger.js';
import type { Delivery, EventConsumer } from './bus.js';
import { newEvent, type EventEnvelope } from './envelope.js';
import { NatsEventBus, type NatsEventBusOptions } from './nats-bus.js';

// What only the JetStream adapter has: server-side configuration, and bytes from outside.

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const logger = createLogger({ service: 'nats-bus-test', level: 'silent' });
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 8_000, interval: 20 });

let nc: NatsConnection;
let jsm: JetStreamManager;
const streams: string[] = [];

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

async function openBus(overrides: Partial<NatsEventBusOptions> = {}) {
  const tag = randomBytes(5).toString('hex');
  const options: NatsEventBusOptions = { servers: NATS_URL, name: `nats-test-${tag}`, logger, stream: `N_${tag}`, subjectPrefix: `n_${tag}`, ...overrides };
  streams.push(options.stream!);
  const bus = await NatsEventBus.connect(options);
  return { bus, stream: options.stream!, prefix: options.subjectPrefix! };
}

function collector(name: string, filter: string, handle?: (envelope: EventEnvelope<object>, delivery: Delivery) => Promise<void>) {
  /** Each delivery as its handler starts, and as it succeeds. */
  const started: { id: string; attempt: number }[] = [];
  const seen: { id: string; attempt: number }[] = [];
  const consumer: EventConsumer = {
    name,
    filter,
    concurrency: 4,
    async handle(envelope, delivery) {
      started.push({ id: envelope.id, attempt: delivery.attempt });
      await handle?.(envelope, delivery);
      seen.push({ id: envelope.id, attempt: delivery.attempt });
    },
  };
  return { consumer, started, seen };
}

describe('NatsEventBus', () => {
  it('creates the stream with file storage and a duplicate window of two minutes, and a durable explicit-ack consumer', async () => {
    const { bus, stream, prefix } = await openBus({ ackWaitMs: 20_000 });
    try {
      const info = await jsm.streams.info(stream);
      expect(info.config).toMatchObject({ subjects: [`${prefix}.>`], storage: StorageType.File, duplicate_window: nanos(120_000) });

      await bus.subscribe(collector('dispatcher', `${prefix}.>`).consumer);
      const consumer = await jsm.consumers.info(stream, 'dispatcher');
      expect(consumer.config).toMatchObject({
        durable_name: 'dispatcher',
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: `${prefix}.>`,
        ack_wait: nanos(20_000),
      });
      expect(consumer.config.max_ack_pending).toBeGreaterThanOrEqual(4);
    } finally {
      await bus.close();
    }
  });

  it('terminates a payload that is not an envelope instead of redelivering it, and goes on', async () => {
    const { bus, stream, prefix } = await openBus();
    try {
      const { consumer, seen } = collector('c1', `${prefix}.>`);
      await bus.subscribe(consumer);
      const js = jetstream(nc);
      await js.publish(`${prefix}.tnt_a.note.created`, 'not json');
      await js.publish(`${prefix}.tnt_a.note.created`, JSON.stringify({ id: 'evt_1', type: 'x' }));
      const valid = newEvent('note.created', 'tnt_a', {});
      await bus.publish(valid);
      await waitFor(() => expect(seen.map((entry) => entry.id)).toEqual([valid.id]));
      await waitFor(async () => {
        const info = await jsm.consumers.info(stream, 'c1');
        expect(info.num_ack_pending).toBe(0);
        expect(info.num_pending).toBe(0);
        expect(info.num_redelivered).toBe(0);
      });
    } finally {
      await bus.close();
    }
  });

  it('keeps a handler that outlasts ack_wait from being redelivered while it works', async () => {
    const { bus, prefix } = await openBus({ ackWaitMs: 1_000 });
    try {
      const event = newEvent('note.created', 'tnt_a', {});
      const sentinel = newEvent('note.created', 'tnt_a', {});
      let sentinelStarted!: () => void;
      const sentinelReached = new Promise<void>((resolve) => (sentinelStarted = resolve));
      const { consumer, started, seen } = collector('slow', `${prefix}.>`, (envelope) => {
        if (envelope.id === sentinel.id) {
          sentinelStarted();
          return Promise.resolve();
        }
        // ack_wait is the server's own timer, so the handler must really outlast it.
        return new Promise((resolve) => setTimeout(resolve, 2_500)); // real time
      });
      await bus.subscribe(consumer);
      await bus.publish(event);
      await waitFor(() => expect(seen).toHaveLength(1));
      // A redelivery would have started a second handler while the first worked (concurrency 4), or,
      // if due at its very end, would reach the consumer before an event published now.
      await bus.publish(sentinel);
      await sentinelReached;
      expect(started).toEqual([
        { id: event.id, attempt: 1 },
        { id: sentinel.id, attempt: 1 },
      ]);
      expect(seen[0]).toEqual({ id: event.id, attempt: 1 });
    } finally {
      await bus.close();
    }
  }, 15_000);

  it('fails fast when NATS is not reachable at start', async () => {
    await expect(NatsEventBus.connect({ servers: 'nats://127.0.0.1:1', name: 'nowhere', logger })).rejects.toThrow();
  });
});
