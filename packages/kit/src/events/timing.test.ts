import { describe, expect, it } from 'vitest';
import { backoffDelay, settlesWithin, sleep, Slots } from './timing.js';

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap', () => {
    const backoff = { initialMs: 1_000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((attempt) => backoffDelay(attempt, backoff))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });
});

describe('Slots', () => {
  it('admits at most the limit and hands freed slots on in arrival order', async () => {
    const slots = new Slots(2);
    const order: number[] = [];
    await slots.acquire();
    await slots.acquire();
    const third = slots.acquire().then(() => order.push(3));
    const fourth = slots.acquire().then(() => order.push(4));
    await sleep(10);
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
    await slots.acquire();
    slots.track(sleep(30).then(() => (done += 1)));
    await slots.acquire();
    slots.track(sleep(10).then(() => Promise.reject(new Error('x'))));
    await slots.idle();
    expect(done).toBe(1);
  });

  it('refuses a limit below one', () => {
    expect(() => new Slots(0)).toThrow(RangeError);
  });
});

describe('settlesWithin', () => {
  it('tells whether work settled in time', async () => {
    expect(await settlesWithin(sleep(5), 200)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('x')), 200)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 20)).toBe(false);
  });

  it('sleep ends early when aborted', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 10);
    await sleep(5_000, controller.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
