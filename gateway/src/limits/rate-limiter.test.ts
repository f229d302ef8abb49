import { describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../adapters/memory-rate-limit-store.js';
import { loadGatewayConfig } from '../config.js';
import { RateLimiter } from './rate-limiter.js';

const at = Date.UTC(2026, 0, 15, 12, 30, 50); // 10 s before the minute ends

function limiter(env: Record<string, string>) {
  const now = () => at;
  return new RateLimiter(new MemoryRateLimitStore({ now }), loadGatewayConfig(env), now);
}

describe('RateLimiter', () => {
  it('reports the minute window and refuses with retry_after until it ends', async () => {
    const limits = limiter({ RATE_LIMITS: 'free:2/100' });
    const first = await limits.forTenant('t', 'free');
    expect(first).toEqual({ headers: { 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(at / 1000 + 10) }, error: undefined });
    await limits.forTenant('t', 'free');
    const refused = await limits.forTenant('t', 'free');
    expect(refused.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'retry-after': '10' });
    expect(refused.error).toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 10 });
  });

  it('counts nothing for a plan unlimited in both windows', async () => {
    const limits = limiter({ RATE_LIMITS: 'free:1/1,enterprise:0/0' });
    for (let n = 0; n < 5; n += 1) expect(await limits.forTenant('t', 'enterprise')).toEqual({ headers: {}, error: undefined });
  });

  it('refuses logins for an e-mail after the failure limit', async () => {
    const limits = limiter({ LOGIN_FAILURE_LIMIT: '2', LOGIN_FAILURE_WINDOW_SECONDS: '900' });
    expect(await limits.loginAllowed('a@example.com')).toBeUndefined();
    await limits.loginFailed('a@example.com');
    await limits.loginFailed('a@example.com');
    const refused = await limits.loginAllowed('a@example.com');
    expect(refused).toMatchObject({ code: 'rate_limit_exceeded' });
    // The 15-minute window containing 12:30:50 ends at 12:45:00.
    expect(refused?.retryAfter).toBe(14 * 60 + 10);
    expect(await limits.loginAllowed('b@example.com')).toBeUndefined();
  });
});
