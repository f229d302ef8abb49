import { DomainError } from '@agent-platform/kit';
import type { RateLimitOutcome, RateLimitStore, RateWindow } from '../adapters/rate-limit-store.js';
import { limitsOf, type GatewayConfig } from '../config.js';

const MINUTE = 60; // seconds
const DAY = 86_400; // seconds

export interface LimitDecision {
  /** X-RateLimit-* (and Retry-After when refused) to put on the response, whatever it is. */
  headers: Record<string, string>;
  /** Set when the request is over a limit. */
  error: DomainError | undefined;
}

type LimiterConfig = Pick<
  GatewayConfig,
  'RATE_LIMITS' | 'AUTH_RATE_LIMIT_PER_MINUTE' | 'LOGIN_FAILURE_LIMIT' | 'LOGIN_FAILURE_WINDOW_SECONDS'
>;

/** decisions §9: per tenant by plan, per client IP on the open auth routes, failed logins per e-mail. */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly config: LimiterConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of the tenant in its plan's minute and day windows. */
  async forTenant(tenantId: string, plan: string): Promise<LimitDecision> {
    const limits = limitsOf(this.config, plan);
    const windows: RateWindow[] = [];
    if (limits.perMinute > 0) windows.push({ seconds: MINUTE, limit: limits.perMinute });
    if (limits.perDay > 0) windows.push({ seconds: DAY, limit: limits.perDay });
    // Unlimited in both windows: nothing to count and no limit to report.
    if (windows.length === 0) return { headers: {}, error: undefined };
    const outcome = await this.store.consume(`tenant:${tenantId}`, windows);
    return this.decide(outcome, limits.perMinute > 0, 'The rate limit of your plan is exceeded.');
  }

  /** Counts one request from a client address on the unauthenticated auth routes. */
  async forClientIp(ip: string): Promise<LimitDecision> {
    const outcome = await this.store.consume(`ip:${ip}`, [{ seconds: MINUTE, limit: this.config.AUTH_RATE_LIMIT_PER_MINUTE }]);
    return this.decide(outcome, true, 'Too many requests from this address.');
  }

  /** Refuses a login attempt for an e-mail with too many recent failures, before identity is asked. */
  async loginAllowed(email: string): Promise<DomainError | undefined> {
    const outcome = await this.store.peek(`login:${email}`, [this.loginWindow()]);
    return outcome.allowed ? undefined : this.decide(outcome, false, 'Too many failed logins for this account; try again later.').error;
  }

  async loginFailed(email: string): Promise<void> {
    await this.store.consume(`login:${email}`, [this.loginWindow()]);
  }

  private loginWindow(): RateWindow {
    return { seconds: this.config.LOGIN_FAILURE_WINDOW_SECONDS, limit: this.config.LOGIN_FAILURE_LIMIT };
  }

  /** The headers describe the first (minute) window; a refusal waits for the latest full window to end. */
  private decide(outcome: RateLimitOutcome, reportFirstWindow: boolean, message: string): LimitDecision {
    const nowSeconds = Math.floor(this.now() / 1000);
    const headers: Record<string, string> = {};
    const first = outcome.windows[0];
    if (reportFirstWindow && first) {
      headers['x-ratelimit-limit'] = String(first.limit);
      headers['x-ratelimit-remaining'] = String(outcome.allowed ? first.remaining : 0);
      headers['x-ratelimit-reset'] = String(first.resetAt);
    }
    if (outcome.allowed) return { headers, error: undefined };
    const full = outcome.windows.filter((window) => window.count + 1 > window.limit);
    const resetAt = Math.max(...full.map((window) => window.resetAt), nowSeconds + 1);
    const retryAfter = Math.max(1, resetAt - nowSeconds);
    headers['retry-after'] = String(retryAfter);
    return { headers, error: new DomainError('rate_limit_exceeded', message, { retryAfter }) };
  }
}
