/** Back-off after failures: `initialMs` after the first, doubling up to `maxMs`. */
export interface RetryBackoff {
  initialMs: number;
  maxMs: number;
}

/** The delay before retry number `attempt` (1-based): `initialMs · 2^(attempt−1)`, at most `maxMs`. */
export function backoffDelay(attempt: number, backoff: RetryBackoff): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.min(backoff.initialMs * 2 ** exponent, backoff.maxMs);
}
