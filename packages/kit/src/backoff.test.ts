import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap', () => {
    const backoff = { initialMs: 1_000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((attempt) => backoffDelay(attempt, backoff))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it('waits nothing when the initial delay is nothing', () => {
    expect(backoffDelay(5, { initialMs: 0, maxMs: 1_000 })).toBe(0);
  });
});
