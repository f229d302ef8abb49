import { Writable } from 'node:stream';
import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { LeasedWorkLoop, type LeasedWorkLoopOptions } from './leased-work-loop.js';
import { Changes, deferred, MemorySource, reporting, type Deferred } from '../../test/support/leased-work-loop.js';

const LONG_POLL_MS = 60_000;
const loops: LeasedWorkLoop<string>[] = [];
let lines: Record<string, unknown>[] = [];
const logger = createLogger({
  service: 'work-loop-test',
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  }),
});

function setUp(process: LeasedWorkLoopOptions<string>['process'], overrides: Partial<LeasedWorkLoopOptions<string>> = {}) {
  const changes = new Changes();
  const source = new MemorySource(changes);
  const loop = new LeasedWorkLoop<string>({
    name: 'test',
    claim: (limit) => source.claim(limit),
    release: (item) => source.release(item),
    process,
    concurrency: 2,
    pollIntervalMs: LONG_POLL_MS,
    logger,
    ...overrides,
  });
  loops.push(loop);
  return { changes, source, loop };
}

// The trace test needs a real context manager; without one every context is the root.
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

afterEach(async () => {
  await Promise.all(loops.splice(0).map((loop) => loop.stop(0)));
  lines = [];
});

describe('LeasedWorkLoop', () => {
  it('never has more than `concurrency` items in process, and refills as slots free', async () => {
    const changes = new Changes();
    const holds: Deferred[] = [];
    let active = 0;
    let maxActive = 0;
    let done = 0;
    const { source, loop } = setUp(
      async () => {
        active += 1;
        maxActive = Math.max(maxActive, active, loop.inFlight);
        const hold = deferred();
        holds.push(hold);
        changes.notify();
        await hold.promise;
        active -= 1;
        done += 1;
      },
      { concurrency: 3 },
    );
    source.due.push(...Array.from({ length: 20 }, (_, i) => `item-${i}`));
    loop.start();
    // Finish the oldest item each time the loop is full (or the queue ran dry), until all are done.
    for (let finished = 0; finished < 20; finished += 1) {
      await changes.until(() => holds.length === Math.min(finished + 3, 20));
      expect(loop.inFlight).toBeLessThanOrEqual(3);
      holds[finished]?.resolve();
    }
    await loop.stop(1_000);
    expect(done).toBe(20);
    expect(maxActive).toBe(3);
  });

  it('serves a wake at once, without waiting for the poll', async () => {
    const processed = deferred<string>();
    const { changes, source, loop } = setUp(reporting(processed));
    loop.start();
    await changes.until(() => source.claims === 1);
    source.due.push('new');
    loop.wake();
    expect(await processed.promise).toBe('new');
  });

  it('claims again after a wake that came during a claim', async () => {
    const processed = deferred<string>();
    const { changes, source, loop } = setUp(reporting(processed));
    const gate = deferred();
    source.gate = gate.promise;
    loop.start();
    // The first claim has looked (and found nothing) when the work and its wake arrive.
    await changes.until(() => source.claims === 1);
    source.due.push('late');
    loop.wake();
    source.gate = undefined;
    gate.resolve();
    expect(await processed.promise).toBe('late');
    expect(source.claims).toBe(2);
  });

  it('claims and starts work with no trace context, whoever woke it', async () => {
    const seen: unknown[] = [];
    const processed = deferred();
    const { source, loop } = setUp(() => {
      seen.push(trace.getSpan(context.active()));
      processed.resolve();
      return Promise.resolve();
    });
    source.claim = (limit) => {
      seen.push(trace.getSpan(context.active()));
      return MemorySource.prototype.claim.call(source, limit);
    };
    source.due.push('traced');
    const traced = trace.setSpanContext(ROOT_CONTEXT, { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
    context.with(traced, () => loop.start());
    await processed.promise;
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.filter((span) => span !== undefined)).toEqual([]);
  });

  it('stops claiming and waits for the work in process when it finishes within the grace', async () => {
    const hold = deferred();
    const started = deferred();
    let stopped = false;
    let finishedBeforeStop = false;
    let signal: AbortSignal | undefined;
    const { source, loop } = setUp(async (_item, abort) => {
      signal = abort;
      started.resolve();
      await hold.promise;
      finishedBeforeStop = !stopped;
    });
    source.due.push('slow');
    loop.start();
    await started.promise;
    const stopping = loop.stop(60_000).then(() => (stopped = true));
    source.due.push('after-stop');
    loop.wake();
    hold.resolve();
    await stopping;
    expect(finishedBeforeStop).toBe(true);
    expect(signal?.aborted).toBe(false);
    expect(source.due).toEqual(['after-stop']);
    expect(source.released).toEqual([]);
    expect(loop.inFlight).toBe(0);
  });

  it('past the grace, aborts the work in process and releases what it claimed but did not start', async () => {
    const started = deferred<AbortSignal>();
    const processed: string[] = [];
    let settledAfterAbort = false;
    const { changes, source, loop } = setUp(async (item, signal) => {
      processed.push(item);
      started.resolve(signal);
      // Work that only ends when told to.
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      settledAfterAbort = true;
    });
    source.due.push('stuck');
    loop.start();
    const signal = await started.promise;
    // A second claim is under way (it has taken 'claimed') when stop begins, and answers only after the grace.
    const gate = deferred();
    source.gate = gate.promise;
    source.due.push('claimed');
    loop.wake();
    await changes.until(() => source.claims === 2);
    // The claim answers a turn of the event loop after the aborted work has ended, so only a stop
    // that waits for the claim itself sees its items released.
    signal.addEventListener('abort', () => setImmediate(() => gate.resolve()), { once: true });
    await loop.stop(50);
    expect(signal.aborted).toBe(true);
    expect(settledAfterAbort).toBe(true);
    expect(processed).toEqual(['stuck']);
    expect(source.released).toEqual(['claimed']);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringContaining('aborting'), work_loop: 'test' }));
  });

  it('survives a failing claim: it logs it and the next poll claims', async () => {
    const processed = deferred<string>();
    const { source, loop } = setUp(reporting(processed), { pollIntervalMs: 10 });
    source.failNext = new Error('database away');
    source.due.push('due');
    loop.start();
    expect(await processed.promise).toBe('due');
    expect(source.claims).toBe(2);
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: expect.stringContaining('claiming work failed'), err: expect.objectContaining({ message: 'database away' }) }));
  });

  describe('offer', () => {
    it('starts an item it is handed while a slot is free, and declines when full or stopped', async () => {
      const hold = deferred();
      const started: string[] = [];
      const { loop } = setUp(
        async (item) => {
          started.push(item);
          await hold.promise;
        },
        { concurrency: 1 },
      );
      expect(loop.offer('before-start')).toBe(false);
      loop.start();
      expect(loop.offer('mine')).toBe(true);
      expect(loop.offer('no-room')).toBe(false);
      expect(started).toEqual(['mine']);
      hold.resolve();
      await loop.stop(1_000);
      expect(loop.offer('after-stop')).toBe(false);
      expect(started).toEqual(['mine']);
    });

    it('keeps the cap when an offer takes the slot a claim under way was for: the claimed item is released', async () => {
      const hold = deferred();
      const started: string[] = [];
      const { changes, source, loop } = setUp(
        async (item) => {
          started.push(item);
          await hold.promise;
        },
        { concurrency: 1 },
      );
      const gate = deferred();
      source.gate = gate.promise;
      source.due.push('claimed');
      loop.start();
      await changes.until(() => source.claims === 1);
      expect(loop.offer('mine')).toBe(true);
      gate.resolve();
      await changes.until(() => source.released.length === 1);
      expect(source.released).toEqual(['claimed']);
      expect(started).toEqual(['mine']);
      expect(loop.inFlight).toBe(1);
      hold.resolve();
    });
  });

  describe('when process fails', () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    beforeAll(() => process.on('unhandledRejection', record));
    afterAll(() => process.off('unhandledRejection', record));

    it('logs the failure, frees the slot and lets nothing escape', async () => {
      const last = deferred<string>();
      const { source, loop } = setUp(
        (item) => {
          if (item === 'throws') throw new Error('thrown synchronously');
          if (item === 'rejects') return Promise.reject(new Error('rejected'));
          last.resolve(item);
          return Promise.resolve();
        },
        { concurrency: 1 },
      );
      source.due.push('throws', 'rejects', 'fine');
      loop.start();
      // With one slot, 'fine' runs only after both failures freed it.
      expect(await last.promise).toBe('fine');
      await loop.stop(1_000);
      // Unhandled rejections are reported once the microtask queue drains; let that happen.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      const failures = lines.filter((line) => line.level === 50).map((line) => (line.err as { message: string }).message);
      expect(failures).toEqual(['thrown synchronously', 'rejected']);
      expect(source.released).toEqual([]);
    });
  });
});
