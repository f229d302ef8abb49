import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Clock } from '../clock.js';
import { ManualClock } from '../testing/manual-clock.js';
import { createLogger } from '../logger.js';
import { startTelemetry } from '../telemetry/index.js';
import type { Delivery, EventBus, EventConsumer, Subscription } from './bus.js';
import { newEvent, type EventEnvelope } from './envelope.js';
import { InProcessEventBus } from './in-process-bus.js';
import { NatsEventBus } from './nats-bus.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const logger = createLogger({ service: 'event-bus-test', level: 'silent' });
// Fast redelivery so a failure-then-success test takes a fraction of a second.
const retry = { initialMs: 100, maxMs: 400 };
// Propagation only (no exporter), as every service runs it.
await startTelemetry({ serviceName: 'event-bus-test' });

interface BusUnderTest {
  bus: EventBus;
  /** The subject prefix of this bus's events; filters are written against it. */
  prefix: string;
  /** Another bus on the same stream, as a restarted process would have. */
  reopen: () => Promise<EventBus>;
}

interface Adapter {
  name: string;
  /**
   * `consumers`: the durable names the test will subscribe (the in-process bus must know them);
   * `clock`: what the bus measures its own bounds with.
   */
  open: (consumers: string[], clock?: Clock) => Promise<BusUnderTest>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const adapters: Adapter[] = [
  {
    name: 'NatsEventBus',
    async open(_consumers, clock) {
      // A stream and subject space of its own per test, so tests share the server with anything.
      const tag = randomBytes(5).toString('hex');
      const options = { servers: NATS_URL, name: `contract-${tag}`, logger, stream: `T_${tag}`, subjectPrefix: `t_${tag}`, retry, clock };
      const bus = await NatsEventBus.connect(options);
      const opened: EventBus[] = [bus];
      cleanups.push(async () => {
        await Promise.all(opened.map((each) => each.close()));
        const nc = await connect({ servers: NATS_URL });
        await (await jetstreamManager(nc)).streams.delete(options.stream);
        await nc.close();
      });
      const reopen = async () => {
        const again = await NatsEventBus.connect(options);
        opened.push(again);
        return again;
      };
      return { bus, prefix: options.subjectPrefix, reopen };
    },
  },
  {
    name: 'InProcessEventBus',
    open(consumers, clock) {
      const bus = new InProcessEventBus({ consumers, logger, retry, subscribeTimeoutMs: 2_000, clock });
      cleanups.push(() => bus.close());
      return Promise.resolve({ bus, prefix: 'events', reopen: () => Promise.resolve(bus) });
    },
  },
];

/** A consumer that records what it handled; `gate` lets a test hold handlers in flight. */
function recorder(name: string, filter: string, concurrency = 1) {
  const handled: { envelope: EventEnvelope<object>; delivery: Delivery }[] = [];
  /** The trace id active in each successful handler call. */
  const traceIds: (string | undefined)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let gate: Promise<void> = Promise.resolve();
  let fail: (envelope: EventEnvelope<object>, delivery: Delivery) => boolean = () => false;
  const waiters: { id: string; resolve: () => void }[] = [];
  const consumer: EventConsumer = {
    name,
    filter,
    concurrency,
    async handle(envelope, delivery) {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await gate;
        if (fail(envelope, delivery)) throw new Error('handler failure for the test');
        handled.push({ envelope, delivery });
        traceIds.push(trace.getActiveSpan()?.spanContext().traceId);
        for (const waiter of waiters.filter((each) => each.id === envelope.id)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      } finally {
        inFlight -= 1;
      }
    },
  };
  return {
    consumer,
    handled,
    traceIds,
    ids: () => handled.map((entry) => entry.envelope.id),
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return release;
    },
    failWhen(predicate: typeof fail) {
      fail = predicate;
    },
    /** Resolves once the handler has succeeded for event `id`. */
    handledEvent(id: string): Promise<void> {
      if (handled.some((entry) => entry.envelope.id === id)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ id, resolve }));
    },
  };
}

const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 8_000, interval: 20 });

describe.each(adapters)('EventBus contract: $name', (adapter) => {
  it('delivers a published event to a subscribed consumer, with the exact text published', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    await bus.subscribe(c1.consumer);
    const event = newEvent('note.created', 'tnt_a', { note_id: 'n1', nested: { b: 1, a: 2 } });
    const json = JSON.stringify(event, null, 1);
    await bus.publish(event, json);
    await waitFor(() => expect(c1.handled).toHaveLength(1));
    expect(c1.handled[0]).toEqual({ envelope: event, delivery: { json, attempt: 1 } });
  });

  it('runs the handler in the trace context published with the event', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    await bus.subscribe(c1.consumer);
    const traceId = randomBytes(16).toString('hex');
    const traced = newEvent('note.created', 'tnt_a', {});
    await bus.publish(traced, undefined, { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    const untraced = newEvent('note.created', 'tnt_a', {});
    await bus.publish(untraced);
    await waitFor(() => expect(c1.ids()).toEqual([traced.id, untraced.id]));
    expect(c1.traceIds[0]).toBe(traceId);
    // Nothing leaks from one event to the next: an event published without context starts fresh.
    expect(c1.traceIds[1]).not.toBe(traceId);
  });

  it('publishes a run in order, each event with its exact text and its own trace', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    await bus.subscribe(c1.consumer);
    const traceId = randomBytes(16).toString('hex');
    const run = Array.from({ length: 5 }, (_, i) => {
      const envelope = newEvent('note.created', i % 2 ? 'tnt_a' : 'tnt_b', { i });
      return { envelope, json: JSON.stringify(envelope, null, i), trace: i === 2 ? { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } : null };
    });
    await bus.publishAll(run);
    await waitFor(() => expect(c1.handled).toHaveLength(run.length));
    expect(c1.handled).toEqual(run.map(({ envelope, json }) => ({ envelope, delivery: { json, attempt: 1 } })));
    expect(c1.traceIds[2]).toBe(traceId);
    expect(c1.traceIds.filter((id) => id === traceId)).toHaveLength(1);
  });

  it('routes by subject filter with NATS semantics (* one token, > the rest)', async () => {
    const { bus, prefix } = await adapter.open(['tenant-a', 'low-credits']);
    const tenantA = recorder('tenant-a', `${prefix}.tnt_a.>`);
    const lowCredits = recorder('low-credits', `${prefix}.*.billing.credits.low`);
    await bus.subscribe(tenantA.consumer);
    await bus.subscribe(lowCredits.consumer);
    const events = [
      newEvent('billing.purchase.completed', 'tnt_a', {}),
      newEvent('billing.credits.low', 'tnt_b', {}),
      newEvent('agent.created', 'tnt_b', {}),
      newEvent('billing.credits.low.extra', 'tnt_a', {}),
      newEvent('billing.credits.low', 'tnt_a', {}), // matches both: the last thing each sees
    ];
    for (const event of events) await bus.publish(event);
    await waitFor(() => expect(tenantA.ids()).toContain(events[4]!.id));
    await waitFor(() => expect(lowCredits.ids()).toContain(events[4]!.id));
    expect(tenantA.ids()).toEqual([events[0]!.id, events[3]!.id, events[4]!.id]);
    expect(lowCredits.ids()).toEqual([events[1]!.id, events[4]!.id]);
  });

  it('redelivers an event whose handler failed, with the attempt counted', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    const event = newEvent('note.created', 'tnt_a', {});
    c1.failWhen((envelope, delivery) => envelope.id === event.id && delivery.attempt < 3);
    await bus.subscribe(c1.consumer);
    await bus.publish(event);
    await c1.handledEvent(event.id);
    expect(c1.handled.map((entry) => entry.delivery.attempt)).toEqual([3]);
    // Not delivered again once handled: a redelivery due now would reach the consumer (of
    // concurrency 1) before a later event, as JetStream serves redeliveries first and the in-process
    // publish settles only once handled. So a sentinel handled means none was due.
    const sentinel = newEvent('note.created', 'tnt_a', {});
    await bus.publish(sentinel);
    await c1.handledEvent(sentinel.id);
    expect(c1.ids()).toEqual([event.id, sentinel.id]);
  });

  it('delivers a re-published event id once', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    await bus.subscribe(c1.consumer);
    const event = newEvent('note.created', 'tnt_a', {});
    await bus.publish(event);
    await bus.publish(event);
    const sentinel = newEvent('note.created', 'tnt_a', {});
    await bus.publish(sentinel);
    await waitFor(() => expect(c1.ids()).toContain(sentinel.id));
    expect(c1.ids()).toEqual([event.id, sentinel.id]);
  });

  it('hands sequential publishes to a consumer of concurrency 1 in order', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const c1 = recorder('c1', `${prefix}.>`);
    await bus.subscribe(c1.consumer);
    const events = Array.from({ length: 25 }, (_, i) => newEvent('note.created', i % 2 ? 'tnt_a' : 'tnt_b', { i }));
    for (const event of events) await bus.publish(event);
    await waitFor(() => expect(c1.handled).toHaveLength(events.length));
    expect(c1.ids()).toEqual(events.map((event) => event.id));
  });

  it('never runs more than `concurrency` handlers of a consumer at once', async () => {
    const { bus, prefix } = await adapter.open(['c1', 'witness']);
    const c1 = recorder('c1', `${prefix}.>`, 3);
    const witness = recorder('witness', `${prefix}.>`);
    const release = c1.hold();
    await bus.subscribe(c1.consumer);
    await bus.subscribe(witness.consumer);
    const events = Array.from({ length: 8 }, (_, i) => newEvent('note.created', 'tnt_a', { i }));
    // In process, publish resolves only once handled: keep them pending while the gate is shut.
    const published = Promise.all(events.map((event) => bus.publish(event)));
    await waitFor(() => expect(c1.inFlight()).toBe(3));
    // The witness, a consumer of its own taking one event at a time, has the last event only once the
    // bus has handed out all eight: by then c1 would have started a fourth, had it ignored its limit.
    await witness.handledEvent(events.at(-1)!.id);
    expect(witness.ids()).toEqual(events.map((event) => event.id));
    expect(c1.maxInFlight()).toBe(3);
    release();
    await published;
    await waitFor(() => expect(c1.handled).toHaveLength(8));
    expect(c1.maxInFlight()).toBe(3);
  });

  it('close lets the handlers in flight finish and acknowledges them', async () => {
    const clock = new ManualClock();
    const { bus, prefix, reopen } = await adapter.open(['c1'], clock);
    const c1 = recorder('c1', `${prefix}.>`, 2);
    const release = c1.hold();
    await bus.subscribe(c1.consumer);
    const events = [newEvent('note.created', 'tnt_a', {}), newEvent('note.created', 'tnt_a', {})];
    const published = Promise.allSettled(events.map((event) => bus.publish(event)));
    await waitFor(() => expect(c1.inFlight()).toBe(2));
    expect(clock.sleeping).toBe(0);
    const closed = bus.close();
    let inFlightWhenClosed: number | undefined;
    void closed.then(() => (inFlightWhenClosed = c1.inFlight()));
    // Close waits for the two handlers, bounded on the bus's clock...
    await Promise.race([clock.untilSleeping(), closed]);
    // ...and goes no further while they run, even once every callback already due has run (a turn
    // of the event loop): it has not returned, nor begun closing the connection (a second wait).
    await new Promise((resolve) => setImmediate(resolve));
    expect(inFlightWhenClosed).toBeUndefined();
    expect(clock.sleeping).toBe(1);
    release();
    await closed;
    expect(inFlightWhenClosed).toBe(0);
    expect(c1.ids().sort()).toEqual(events.map((event) => event.id).sort());
    await published;
    await expect(bus.publish(newEvent('note.created', 'tnt_a', {}))).rejects.toThrow();

    // Acked before the connection closed: a consumer of the same name does not get them again.
    const again = await reopen();
    if (again === bus) return; // in process there is no second life to look at
    const after = recorder('c1', `${prefix}.>`);
    await again.subscribe(after.consumer);
    // An event handed back unacknowledged would be redelivered before one published now.
    const sentinel = newEvent('note.created', 'tnt_a', {});
    await again.publish(sentinel);
    await after.handledEvent(sentinel.id);
    expect(after.ids()).toEqual([sentinel.id]);
  });

  it('keeps events for a durable consumer while it is stopped and delivers them when it resubscribes', async () => {
    const { bus, prefix } = await adapter.open(['c1']);
    const first = recorder('c1', `${prefix}.>`);
    const subscription: Subscription = await bus.subscribe(first.consumer);
    await subscription.stop();
    const event = newEvent('note.created', 'tnt_a', {});
    const published = bus.publish(event);
    const second = recorder('c1', `${prefix}.>`);
    await bus.subscribe(second.consumer);
    await published;
    await waitFor(() => expect(second.ids()).toEqual([event.id]));
    expect(first.handled).toEqual([]);
  });
});
