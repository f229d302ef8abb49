import { describe, expect, it } from 'vitest';
import { parseRetrySchedule, planAfter } from './retry-schedule.js';

describe('parseRetrySchedule', () => {
  it('reads the default of the spec: 5 attempts', () => {
    expect(parseRetrySchedule('0,60,300,1800,7200')).toEqual([0, 60, 300, 1800, 7200]);
  });

  it('tolerates spaces and takes 1 to 10 entries', () => {
    expect(parseRetrySchedule(' 0, 1 ,2')).toEqual([0, 1, 2]);
    expect(parseRetrySchedule('5')).toEqual([5]);
    expect(parseRetrySchedule(Array(10).fill('1').join(','))).toHaveLength(10);
  });

  it.each([
    ['', /at least one/],
    [Array(11).fill('1').join(','), /at most 10/],
    ['0,1.5,2', /entry 2 .* whole number/],
    ['0,-1', /entry 2/],
    ['0,,1', /entry 2/],
    ['0,abc', /entry 2 \("abc"\)/],
    ['0,999999999', /at most 604800 seconds/],
  ])('rejects %j', (text, problem) => {
    const result = parseRetrySchedule(text);
    expect(typeof result).toBe('string');
    expect(result).toMatch(problem);
  });
});

describe('planAfter', () => {
  const schedule = [0, 60, 300, 1800, 7200];

  it('waits schedule[n] seconds before attempt n + 1 after a failure', () => {
    expect(planAfter(false, schedule, 1, 5)).toEqual({ retryInSeconds: 60 });
    expect(planAfter(false, schedule, 2, 5)).toEqual({ retryInSeconds: 300 });
    expect(planAfter(false, schedule, 3, 5)).toEqual({ retryInSeconds: 1800 });
    expect(planAfter(false, schedule, 4, 5)).toEqual({ retryInSeconds: 7200 });
  });

  it('is final after a success, and after a failure of the last attempt of the budget', () => {
    expect(planAfter(true, schedule, 1, 5)).toEqual({ final: true });
    expect(planAfter(false, schedule, 5, 5)).toEqual({ final: true });
    // A replay of a finished delivery has a budget of one more attempt.
    expect(planAfter(false, schedule, 6, 6)).toEqual({ final: true });
  });

  it('reuses the last delay when the schedule shrank under a pending delivery', () => {
    expect(planAfter(false, [0, 10], 3, 5)).toEqual({ retryInSeconds: 10 });
  });
});
