import { describe, expect, it } from 'vitest';
import { settlesWithin, TimeoutError, withTimeout } from './timeout.js';

describe('withTimeout', () => {
  it('passes the outcome through when the work settles in time', async () => {
    expect(await withTimeout(Promise.resolve(7), 100)).toBe(7);
    await expect(withTimeout(Promise.reject(new RangeError('no')), 100)).rejects.toBeInstanceOf(RangeError);
  });

  it('rejects with a TimeoutError carrying the message when the bound passes first', async () => {
    const never = new Promise<never>(() => undefined);
    await expect(withTimeout(never, 10, 'identity did not answer')).rejects.toEqual(new TimeoutError('identity did not answer'));
  });
});

describe('settlesWithin', () => {
  it('is true for work that resolves or rejects in time, false for work that does not', async () => {
    expect(await settlesWithin(Promise.resolve(), 100)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error('x')), 100)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 10)).toBe(false);
  });
});
