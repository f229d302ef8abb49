import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../testing/manual-clock.js';
import { createLogger } from '../logger.js';
import type { EventConsumer } from './bus.js';
import { newEvent } from './envelope.js';
import { InProcessEventBus, type InProcessEventBusOptions } from './in-process-bus.js';

// What only the in-process adapter promises: publish settles on the declared consumers' outcome.

const logger = createLogger({ service: 'in-process-bus-test', level: 'silent' });
const retry = { initialMs: 20, maxMs: 50 };
const buses: InProcessEventBus[] = [];

afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

function open(options: Partial<InProcessEventBusOptions> & { consumers: string[] }): InProcessEventBus {
  const bus = new InProcessEventBus({ logger, retry, ...options });
  buses.push(bus);
  return bus;
}

function consumer(name: string, handle: EventConsumer['handle'], filter = 'events.>'): EventConsumer {
  return { name, filter, concurrency: 1, handle };
}

describe('InProcessEventBus', () => {
  it('resolves a publish at once when no declared consumer matches', async () => {
    const bus = open({ consumers: ['credits'] });
    await bus.subscribe(consumer('credits', () => Promise.reject(new Error('must not run')), 'events.*.billing.>'));
    await expect(bus.publish(newEvent('agent.created', 'tnt_1', {}))).resolves.toBeUndefined();
  });

  it('holds a publish until a declared consumer subscribes, and rejects when it never does', async () => {
    const clock = new ManualClock();
    const bus = open({ consumers: ['late', 'absent'], subscribeTimeoutMs: 300, clock });
    const seen: string[] = [];
    const event = newEvent('note.created', 'tnt_1', {});
    const publication = bus.publish(event);
    let settled = false;
    publication.then(
      () => (settled = true),
      () => (settled = true),
    );
    // The publish waits for the consumers to subscribe; 'late' does 250 ms on, within the bound.
    await Promise.race([clock.untilSleeping(), publication]);
    clock.advance(250);
    let handled!: () => void;
    const handledLate = new Promise<void>((resolve) => (handled = resolve));
    await bus.subscribe(
      consumer('late', (envelope) => {
        seen.push(envelope.id);
        handled();
        return Promise.resolve();
      }),
    );
    await handledLate;
    expect(seen).toEqual([event.id]);
    // Still held for 'absent', until its bound has passed.
    expect(clock.sleeping).toBe(1);
    expect(settled).toBe(false);
    clock.advance(50);
    await expect(publication).rejects.toThrow(/not handled by every consumer/);
    expect(seen).toEqual([event.id]);
  });

  it('remembers a handled id per consumer for the dedup window, and hands it over again after it', async () => {
    const clock = new ManualClock();
    const bus = open({ consumers: ['first', 'second'], dedupWindowMs: 1_000, clock });
    const seen: string[] = [];
    const recorder = (name: string) => consumer(name, (envelope) => (seen.push(`${name} ${envelope.id}`), Promise.resolve()));
    await bus.subscribe(recorder('first'));
    await bus.subscribe(recorder('second'));
    const event = newEvent('note.created', 'tnt_1', {});
    await bus.publish(event);
    clock.advance(1_000);
    await bus.publish(event);
    expect(seen).toEqual([`first ${event.id}`, `second ${event.id}`]);
    // Another event marked after the window passes the first one's: that one is forgotten, this one kept.
    clock.advance(1);
    const later = newEvent('note.created', 'tnt_1', {});
    await bus.publish(later);
    await bus.publish(event);
    await bus.publish(later);
    expect(seen).toEqual([`first ${event.id}`, `second ${event.id}`, `first ${later.id}`, `second ${later.id}`, `first ${event.id}`, `second ${event.id}`]);
  });

  it('rejects after its delivery bound when a handler keeps failing; a re-publish reaches only that consumer', async () => {
    const bus = open({ consumers: ['good', 'flaky'], deliveryTimeoutMs: 100 });
    const good: string[] = [];
    let healthy = false;
    const flaky: string[] = [];
    await bus.subscribe(consumer('good', (envelope) => Promise.resolve(void good.push(envelope.id))));
    await bus.subscribe(
      consumer('flaky', (envelope) => (healthy ? Promise.resolve(void flaky.push(envelope.id)) : Promise.reject(new Error('down')))),
    );
    const event = newEvent('note.created', 'tnt_1', {});
    await expect(bus.publish(event)).rejects.toThrow();
    expect(good).toEqual([event.id]);

    healthy = true;
    await bus.publish(event);
    expect(good).toEqual([event.id]);
    expect(flaky).toEqual([event.id]);
  });

  it('joins concurrent publishes of one event id', async () => {
    const bus = open({ consumers: ['c1'] });
    let calls = 0;
    let started!: () => void;
    const handling = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await bus.subscribe(
      consumer('c1', async () => {
        calls += 1;
        started();
        await gate;
      }),
    );
    const event = newEvent('note.created', 'tnt_1', {});
    const first = bus.publish(event);
    await handling;
    // The first delivery is in its handler: these publish the same id while it runs.
    const all = Promise.all([first, bus.publish(event), bus.publish(event)]);
    release();
    await all;
    expect(calls).toBe(1);
  });

  it('hands a run to a batch handler as one unit, again whole after a failure, leaving out what it does not match or has handled', async () => {
    const bus = open({ consumers: ['batched'] });
    const calls: { ids: string[]; attempts: number[]; traces: (string | undefined)[] }[] = [];
    const handledAlone: string[] = [];
    let failures = 1;
    await bus.subscribe({
      ...consumer('batched', (envelope) => Promise.resolve(void handledAlone.push(envelope.id)), 'events.tnt_1.>'),
      handleBatch(events) {
        calls.push({
          ids: events.map((event) => event.envelope.id),
          attempts: events.map((event) => event.delivery.attempt),
          traces: events.map((event) => event.trace?.traceparent),
        });
        return failures-- > 0 ? Promise.reject(new Error('database away (test)')) : Promise.resolve();
      },
    });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const run = [newEvent('note.created', 'tnt_1', {}), newEvent('note.created', 'tnt_2', {}), newEvent('note.created', 'tnt_1', {})].map((envelope, i) => ({
      envelope,
      json: JSON.stringify(envelope),
      trace: i === 0 ? { traceparent } : null,
    }));
    await bus.publishAll(run);
    const mine = [run[0]!.envelope.id, run[2]!.envelope.id];
    // tnt_2's event is not the consumer's; the run failed once and came back whole, counted.
    expect(calls).toEqual([
      { ids: mine, attempts: [1, 1], traces: [traceparent, undefined] },
      { ids: mine, attempts: [2, 2], traces: [traceparent, undefined] },
    ]);
    expect(handledAlone).toEqual([]);

    // Published again with one new event: only that one is handed over (to `handle`, being alone).
    const fresh = newEvent('note.created', 'tnt_1', {});
    await bus.publishAll([...run, { envelope: fresh, json: JSON.stringify(fresh), trace: null }]);
    expect(calls).toHaveLength(2);
    expect(handledAlone).toEqual([fresh.id]);
  });

  it('refuses consumers it was not told about, and a second subscription of one name', async () => {
    const bus = open({ consumers: ['c1'] });
    await expect(bus.subscribe(consumer('stranger', () => Promise.resolve()))).rejects.toThrow(/not declared/);
    await bus.subscribe(consumer('c1', () => Promise.resolve()));
    await expect(bus.subscribe(consumer('c1', () => Promise.resolve()))).rejects.toThrow(/already subscribed/);
  });

  it('rejects publishes waiting for a consumer when it closes', async () => {
    const bus = open({ consumers: ['never'], subscribeTimeoutMs: 10_000 });
    const publication = bus.publish(newEvent('note.created', 'tnt_1', {}));
    await bus.close();
    await expect(publication).rejects.toThrow();
  });
});
