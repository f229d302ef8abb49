import { describe, expect, it } from 'vitest';
import { ManualClock } from '../testing/manual-clock.js';
import { settlesWithin, sleep, Slots } from './timing.js';

/** A turn of the event loop: every callback already due (promise reactions included) has run. */
const aTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('Slots', () => {
  it('admits at most the limit and hands freed slots on in arrival order', async () => {
    const slots = new Slots(2);
    const order: number[] = [];
    await slots.acquire();
    await slots.acquire();
    const third = slots.acquire().then(() => order.push(3));
    const fourth = slots.acquire().then(() => order.push(4));
    await aTurn();
    expect(order).toEqual([]);
    slots.release();
    await third;
    expect(order).toEqual([3]);
    slots.release();
    await fourth;
    expect(order).toEqual([3, 4]);
  });

  it('waits for tracked work to settle, failures included', async () => {
    const slots = new Slots(2);
    let done = 0;
    let finish!: () => void;
    let fail!: (error: Error) => void;
    await slots.acquire();
    slots.track(new Promise<void>((resolve) => (finish = resolve)).then(() => (done += 1)));
    await slots.acquire();
    slots.track(new Promise<void>((_resolve, reject) => (fail = reject)));
    let idle = false;
    const idling = slots.idle().then(() => (idle = true));
    fail(new Error('x'));
    await aTurn();
    // The failure is settled, the other work is not: still not idle.
    expect(idle).toBe(false);
    finish();
    await idling;
    expect(done).toBe(1);
  });

  it('refuses a limit below one', () => {
    expect(() => new Slots(0)).toThrow(RangeError);
  });
});

describe('settlesWithin', () => {
  it('tells whether work settled within the bound on its clock', async () => {
    const clock = new ManualClock();
    expect(await settlesWithin(Promise.resolve(), 200, clock)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('x')), 200, clock)).toBe(true);
    let settle!: () => void;
    const late = settlesWithin(new Promise<void>((resolve) => (settle = resolve)), 200, clock);
    clock.advance(199);
    settle();
    expect(await late).toBe(true);
    const never = settlesWithin(new Promise(() => undefined), 20, clock);
    expect(clock.sleeping).toBe(1);
    clock.advance(20);
    expect(await never).toBe(false);
    // Nothing is left waiting on the clock once an answer is given.
    expect(clock.sleeping).toBe(0);
  });

  it('measures real time by default', async () => {
    // Measured in real time: the system clock's bound is what is tested.
    const started = Date.now();
    expect(await settlesWithin(new Promise(() => undefined), 20)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(19);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('sleep ends early when aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const sleeping = sleep(5_000, controller.signal);
    controller.abort();
    await sleeping;
    // Measured in real time: the helper's own timer is what is tested.
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
