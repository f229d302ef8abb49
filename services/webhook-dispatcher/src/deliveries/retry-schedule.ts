/** At most this many attempts per delivery, whatever the operator configures. */
export const MAX_ATTEMPTS = 10;
/** One week: a longer wait would outlive any receiver's idea of "recent". Seconds. */
const MAX_DELAY_SECONDS = 7 * 24 * 3_600;

/**
 * Parses `WEBHOOK_RETRY_SCHEDULE`: comma-separated whole seconds, entry n being the wait before
 * attempt n + 1 (so the first entry delays the first attempt and is normally 0). The number of
 * entries is the number of attempts, 1 to 10. Returns the problem as a message when it is invalid,
 * so the config loader can report it as one line.
 */
export function parseRetrySchedule(text: string): number[] | string {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.every((part) => part === '')) return 'must list at least one delay in seconds';
  if (parts.length > MAX_ATTEMPTS) return `must list at most ${MAX_ATTEMPTS} delays (one per attempt)`;
  const delays: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (!/^\d+$/.test(part)) return `entry ${index + 1} ("${part}") must be a whole number of seconds`;
    const seconds = Number(part);
    if (seconds > MAX_DELAY_SECONDS) return `entry ${index + 1} must be at most ${MAX_DELAY_SECONDS} seconds`;
    delays.push(seconds);
  }
  return delays;
}

/** After an attempt: retry after this many seconds, or nothing more is to be done. */
export type RetryPlan = { retryInSeconds: number } | { final: true };

/**
 * After attempt `attempt` (1-based): a success is final; a failure is followed by attempt n + 1
 * schedule[n] seconds later while `attempt` is below the delivery's attempt budget (the schedule's
 * length for an event, one more than the count so far for a replay), and is final after that.
 */
export function planAfter(delivered: boolean, schedule: readonly number[], attempt: number, maxAttempts: number): RetryPlan {
  if (delivered || attempt >= maxAttempts) return { final: true };
  // A delivery created under a longer schedule than the current one reuses the last delay.
  return { retryInSeconds: schedule[Math.min(attempt, schedule.length - 1)] ?? 0 };
}
