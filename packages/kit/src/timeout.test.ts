import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from './testing/manual-clock.js';
import { timedSignal, settlesWithin, TimeoutError, withTimeout } from './timeout.js';

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

describe('timedSignal', () => {
  afterEach(() => void vi.useRealTimers());
  const reasons = { timeout: () => new TimeoutError('bound'), parent: (reason: unknown) => new Error('cancelled', { cause: reason }) };

  it('aborts with the timeout reason once the bound passes, and says it expired', () => {
    vi.useFakeTimers();
    const bound = timedSignal(5, new AbortController().signal, reasons);
    vi.advanceTimersByTime(4);
    expect(bound.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(bound.signal.reason).toEqual(new TimeoutError('bound'));
    expect(bound.expired).toBe(true);
  });

  it("aborts with the caller's reason when the caller aborts first, and did not expire even once the bound passes", () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const bound = timedSignal(60_000, caller.signal, reasons);
    caller.abort('stop');
    expect(bound.signal.aborted).toBe(true);
    vi.advanceTimersByTime(60_000);
    expect((bound.signal.reason as Error).cause).toBe('stop');
    expect(bound.expired).toBe(false);
    bound.dispose();
  });

  it("passes the caller's reason through unchanged without a mapping, and starts aborted under an aborted caller", () => {
    const caller = new AbortController();
    caller.abort('gone');
    const bound = timedSignal(60_000, caller.signal, { timeout: () => 'late' });
    expect(bound.signal.reason).toBe('gone');
    bound.dispose();
  });

  it('once disposed, neither the clock nor the caller aborts it', () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const bound = timedSignal(1, caller.signal, reasons);
    bound.dispose();
    vi.advanceTimersByTime(10);
    caller.abort();
    expect(bound.signal.aborted).toBe(false);
    expect(bound.expired).toBe(false);
  });

  it('measures its bound on the clock it is given, and leaves nothing waiting on it once disposed', async () => {
    const clock = new ManualClock();
    const bound = timedSignal(1_000, undefined, reasons, clock);
    clock.advance(999);
    expect(bound.signal.aborted).toBe(false);
    clock.advance(1);
    await vi.waitFor(() => expect(bound.signal.reason).toEqual(new TimeoutError('bound')));
    expect(bound.expired).toBe(true);

    const disposed = timedSignal(1_000, undefined, reasons, clock);
    expect(clock.sleeping).toBe(1);
    disposed.dispose();
    expect(clock.sleeping).toBe(0);
    clock.advance(1_000);
    expect(disposed.signal.aborted).toBe(false);
  });

  it('keeps a bound longer than a timer can hold rather than firing at once', () => {
    vi.useFakeTimers();
    const bound = timedSignal(30 * 24 * 3_600_000, undefined, reasons);
    vi.advanceTimersByTime(24 * 3_600_000);
    expect(bound.signal.aborted).toBe(false);
    bound.dispose();
  });
});
