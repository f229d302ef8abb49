import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, newAccount, newApiKey, PASSWORD, startHarness, uniqueEmail, type Harness, ANY_NUMBER } from '../support/harness.js';
import { setPlan } from '../support/identity-database.js';

// free: 5 a minute, 8 a day; pro: 0 a minute (unlimited) but 3 a day; enterprise unlimited.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    RATE_LIMITS: 'free:5/8,pro:0/3,enterprise:0/0',
    AUTH_RATE_LIMIT_PER_MINUTE: '1000',
    LOGIN_FAILURE_LIMIT: '3',
    LOGIN_FAILURE_WINDOW_SECONDS: '900',
  });
});
afterAll(async () => {
  await h.close();
});

const DAY_MS = 86_400_000;
const nowSeconds = () => Math.floor(h.clock.now() / 1000);

const me = { method: 'GET' as const, url: '/api/v1/auth/me' };

describe('per-tenant limits by plan', () => {
  it('puts the minute window in X-RateLimit-* on every authenticated response, then answers 429', async () => {
    const account = await newAccount(h.app);
    // Windows are fixed minutes of the gateway's clock: start one, so all of it lies ahead.
    const windowStart = h.clock.advanceToNextWindow(60);
    const first = await as(h.app, account.token, me);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('5');
    expect(first.headers['x-ratelimit-remaining']).toBe('4');
    const reset = Number(first.headers['x-ratelimit-reset']);
    expect(reset).toBe(Math.floor(windowStart / 1000) + 60);

    // A 4xx after authentication is counted and carries the headers too.
    const invalid = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/transactions?page=0' });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.headers['x-ratelimit-remaining']).toBe('3');
    // An API key of the same tenant shares the tenant's budget.
    const key = await newApiKey(h.app, account, ['billing:read']);
    expect((await as(h.app, key.key, { method: 'GET', url: '/api/v1/billing/credits' })).headers['x-ratelimit-remaining']).toBe('1');
    expect((await as(h.app, account.token, me)).headers['x-ratelimit-remaining']).toBe('0');

    const asOf = nowSeconds();
    const refused = await as(h.app, account.token, me);
    expect(refused.statusCode).toBe(429);
    const body = refused.json<{ error: string; message: string; retry_after: number }>();
    expect(body.error).toBe('rate_limit_exceeded');
    // Until the window ends, as the gateway's clock read it during the request.
    expect(body.retry_after).toBeLessThanOrEqual(reset - asOf);
    expect(body.retry_after).toBeGreaterThanOrEqual(reset - nowSeconds());
    expect(refused.headers['retry-after']).toBe(String(body.retry_after));
    expect(refused.headers['x-ratelimit-limit']).toBe('5');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-ratelimit-reset']).toBe(String(reset));
    // Refused requests never reach the services.
    const served = h.identity.callsOf('GetCurrentUser').length;
    await as(h.app, account.token, me);
    expect(h.identity.callsOf('GetCurrentUser')).toHaveLength(served);

    // Another tenant is unaffected.
    const other = await newAccount(h.app);
    expect((await as(h.app, other.token, me)).statusCode).toBe(200);
  });

  it('enforces the day window, with retry_after until the day ends', async () => {
    const account = await newAccount(h.app);
    // Before its first authenticated request, so no plan of the tenant is cached yet.
    await setPlan(h, account.tenantId, 'pro');
    // Not in the last minute of a day: the three requests and the refusal share one day window.
    const toMidnightMs = DAY_MS - (h.clock.now() % DAY_MS);
    if (toMidnightMs < 60_000) h.clock.advance(toMidnightMs);
    for (let n = 0; n < 3; n += 1) {
      const ok = await as(h.app, account.token, me);
      expect(ok.statusCode).toBe(200);
      // pro has no minute limit here: there is no minute window to report.
      expect(ok.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const refused = await as(h.app, account.token, me);
    expect(refused.statusCode).toBe(429);
    const secondsToMidnight = 86_400 - (nowSeconds() % 86_400);
    expect(Math.abs(refused.json<{ retry_after: number }>().retry_after - secondsToMidnight)).toBeLessThanOrEqual(1);
    expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('does not limit an unlimited plan', async () => {
    const account = await newAccount(h.app);
    await setPlan(h, account.tenantId, 'enterprise');
    for (let n = 0; n < 12; n += 1) {
      const response = await as(h.app, account.token, me);
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('unauthenticated auth routes', () => {
  // A platform of its own, started in a hook (a test's time-out is shorter than a start under load).
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness({ AUTH_RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('are limited per client IP, across register, login and refresh', async () => {
    limited.clock.advanceToNextWindow(60);
    const from = (remoteAddress: string) => ({ remoteAddress });
    const register = await limited.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: uniqueEmail(), password: PASSWORD }, ...from('203.0.113.7') });
    expect(register.statusCode).toBe(201);
    expect(register.headers['x-ratelimit-limit']).toBe('3');
    expect((await limited.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'nope' }, ...from('203.0.113.7') })).statusCode).toBe(401);
    expect((await limited.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: uniqueEmail(), password: 'x' }, ...from('203.0.113.7') })).statusCode).toBe(401);
    const refused = await limited.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'nope' }, ...from('203.0.113.7') });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate_limit_exceeded', retry_after: ANY_NUMBER });
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // Another address is not limited.
    expect((await limited.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: 'nope' }, ...from('203.0.113.8') })).statusCode).toBe(401);
  });

  it('refuse an e-mail after LOGIN_FAILURE_LIMIT failures, before asking identity', async () => {
    const account = await newAccount(h.app);
    // The failures are counted in fixed windows of LOGIN_FAILURE_WINDOW_SECONDS: start one.
    const windowStart = h.clock.advanceToNextWindow(900);
    const login = (password: string) => h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: account.email, password } });
    for (let n = 0; n < 3; n += 1) expect((await login('wrong password')).statusCode).toBe(401);
    const asked = h.identity.callsOf('Login').length;
    const asOf = nowSeconds();
    const refused = await login(PASSWORD);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: 'rate_limit_exceeded', retry_after: ANY_NUMBER });
    const windowEnd = Math.floor(windowStart / 1000) + 900;
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(windowEnd - asOf);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(windowEnd - nowSeconds());
    expect(h.identity.callsOf('Login')).toHaveLength(asked);
    // Counted per e-mail, whatever its case: another account still logs in.
    expect((await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: account.email.toUpperCase(), password: PASSWORD } })).statusCode).toBe(429);
    const other = await newAccount(h.app);
    expect((await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: other.email, password: PASSWORD } })).statusCode).toBe(200);
  });
});
