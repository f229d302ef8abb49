import { describe, expect, it } from 'vitest';
import { systemClock } from './clock.js';
import { ManualClock } from './testing/manual-clock.js';

describe('ManualClock', () => {
  it('ends waits only when time is moved past them, earliest first', async () => {
    const clock = new ManualClock(1_000);
    const woken: string[] = [];
    const long = clock.sleep(300).then(() => woken.push('300')); // manual clock: no real time passes
    const short = clock.sleep(100).then(() => woken.push('100')); // manual clock: no real time passes
    expect(clock.sleeping).toBe(2);
    clock.advance(99);
    expect(clock.sleeping).toBe(2);
    clock.advance(201);
    await Promise.all([long, short]);
    expect(woken).toEqual(['100', '300']);
    expect(clock.now()).toBe(1_300);
    expect(clock.sleeping).toBe(0);
  });

  it('ends a wait of no time at once, without time being moved', async () => {
    const clock = new ManualClock();
    await clock.sleep(0);
    await clock.sleep(-5);
    expect(clock.sleeping).toBe(0);
  });

  it('ends a wait at once when its signal aborts, before or during it', async () => {
    const clock = new ManualClock();
    await clock.sleep(1_000, AbortSignal.abort());
    const controller = new AbortController();
    const waiting = clock.sleep(1_000, controller.signal);
    controller.abort();
    await waiting;
    expect(clock.sleeping).toBe(0);
  });

  it('tells when something starts to wait on it', async () => {
    const clock = new ManualClock();
    let waiting = false;
    const noticed = clock.untilSleeping().then(() => (waiting = true));
    // Every callback already due has run (a turn of the event loop), and nothing waits yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(waiting).toBe(false);
    void clock.sleep(50);
    await noticed;
    expect(waiting).toBe(true);
    // Already waited on: at once.
    await clock.untilSleeping();
  });

  it('tells when a given number of waits are pending, for code that keeps one wait throughout', async () => {
    const clock = new ManualClock();
    // A wait pending on the manual clock (the subject here): nothing waits in real time.
    void clock.sleep(1_000);
    let second = false;
    const noticed = clock.untilSleeping(2).then(() => (second = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    void clock.sleep(50);
    await noticed;
    expect(clock.sleeping).toBe(2);
  });
});

describe('systemClock', () => {
  it('reads and waits in real time', async () => {
    const started = Date.now();
    // Waits in real time: the system clock itself is what is tested.
    await systemClock.sleep(20);
    expect(systemClock.now() - started).toBeGreaterThanOrEqual(19);
  });
});
