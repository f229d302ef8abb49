import { randomBytes } from 'node:crypto';
import type { InProcessHttp, Logger } from '@agent-platform/kit';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../../test/support/platform.js';
import { Upstream } from './upstream.js';

export { uniquePrefix } from './redis.js';

export const PASSWORD = 'correct horse battery staple';
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// vitest's asymmetric matchers are typed `any`; these keep expected objects typed.
export function matching(pattern: RegExp): unknown {
  return expect.stringMatching(pattern);
}
export const ANY_STRING: unknown = expect.any(String);
export const ANY_NUMBER: unknown = expect.any(Number);

export interface ErrorBody {
  error: string;
  message: string;
  details?: { field: string; message: string }[];
}

/** Asserts the flat error body of decisions §2; `fields`, when given, are exactly the fields named. */
export function expectError(response: { statusCode: number; body: string }, status: number, code: string, fields?: string[]): ErrorBody {
  expect(response.statusCode, response.body).toBe(status);
  const body = JSON.parse(response.body) as ErrorBody;
  expect(Object.keys(body).every((key) => ['error', 'message', 'details', 'retry_after'].includes(key))).toBe(true);
  expect(body.error).toBe(code);
  expect(body.message).toEqual(ANY_STRING);
  if (fields) expect(body.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
  return body;
}

/** The gateway's clock: real time plus what a test added. */
export class TestClock {
  private offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /**
   * Moves to the start of the next window of `seconds` (rate-limit windows are aligned to the
   * epoch), so what a test counts next has the whole window ahead of it. Returns the new time.
   */
  advanceToNextWindow(seconds: number): number {
    const lengthMs = seconds * 1000;
    this.advance(lengthMs - (this.now() % lengthMs));
    return this.now();
  }
}

export interface Harness {
  /** The gateway's Fastify app, for requests without a socket. */
  app: FastifyInstance;
  /** The gateway's address, for requests over a real socket (streams, disconnects). */
  url: string;
  platform: TestPlatform;
  /** The gateway's transports to the real services: what it asked each, and faults on demand. */
  identity: Upstream;
  agentMemory: Upstream;
  webhooks: Upstream;
  workflowRunner: Upstream;
  clock: TestClock;
  /** Makes the runner's in-process ingress refuse every request (as a stopped runner's does), or serve again. */
  setIngressDown(down: boolean): void;
  close(): Promise<void>;
}

/**
 * The gateway in front of the real services, assembled in this process as `pnpm start` assembles
 * them, on databases cloned from migrated templates. Its transports record each call and can fail
 * one method on demand (an upstream that errs or hangs); otherwise every rule is the service's own.
 * `env` overrides the platform's variables; the defaults lift rate limits out of the tests' way.
 */
export async function startHarness(env: Record<string, string> = {}, gatewayLogger?: Logger): Promise<Harness> {
  const clock = new TestClock();
  let ingressDown = false;
  let upstreams: Pick<Harness, 'identity' | 'agentMemory' | 'webhooks' | 'workflowRunner'> | undefined;
  const platform = await startTestPlatform(
    {
      RATE_LIMITS: 'free:10000/100000,pro:20000/200000',
      AUTH_RATE_LIMIT_PER_MINUTE: '10000',
      JWKS_REFRESH_MIN_INTERVAL_MS: '0',
      GRPC_DEADLINE_MS: '2000',
      ...env,
    },
    {
      gateway: { now: clock.now, ...(gatewayLogger ? { logger: gatewayLogger } : {}) },
      wrapBackends: (real) => {
        upstreams = {
          identity: new Upstream(real.identity),
          agentMemory: new Upstream(real.agentMemory),
          webhooks: new Upstream(real.webhookDispatcher),
          workflowRunner: new Upstream(real.workflowRunner),
        };
        const { identity, agentMemory, webhooks, workflowRunner } = upstreams;
        const workflowIngress: InProcessHttp = (request) => (ingressDown ? Promise.reject(new Error('The ingress is down (test).')) : real.workflowIngress(request));
        return { identity, agentMemory, webhookDispatcher: webhooks, workflowRunner, workflowIngress };
      },
    },
  );
  if (!upstreams) throw new Error('the launcher did not hand the gateway its transports');
  const setIngressDown = (down: boolean) => {
    ingressDown = down;
  };
  return { app: platform.gateway.app, url: platform.url, platform, clock, ...upstreams, setIngressDown, close: () => platform.stop() };
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(6).toString('hex')}@example.com`;
}

export interface Account {
  email: string;
  userId: string;
  tenantId: string;
  token: string;
  refreshToken: string;
}

/** Registers a fresh user (with a fresh tenant) through the gateway and logs in. */
export async function newAccount(app: FastifyInstance, fields: { full_name?: string; company?: string } = {}): Promise<Account> {
  const email = uniqueEmail();
  const registered = await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD, ...fields } });
  if (registered.statusCode !== 201) throw new Error(`register: ${registered.statusCode} ${registered.body}`);
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: email, password: PASSWORD } });
  if (login.statusCode !== 200) throw new Error(`login: ${login.statusCode} ${login.body}`);
  const user = registered.json<{ id: string; tenant_id: string }>();
  const tokens = login.json<{ access_token: string; refresh_token: string }>();
  return { email, userId: user.id, tenantId: user.tenant_id, token: tokens.access_token, refreshToken: tokens.refresh_token };
}

export async function newApiKey(app: FastifyInstance, account: Account, scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/api-keys',
    headers: bearer(account.token),
    payload: { name: `key-${randomBytes(3).toString('hex')}`, scopes, ...extra },
  });
  if (created.statusCode !== 201) throw new Error(`api key: ${created.statusCode} ${created.body}`);
  return created.json<{ id: string; key: string }>();
}

/** Adds `member` to `owner`'s tenant with `role`. */
export async function addMember(app: FastifyInstance, owner: Account, member: Account, role: string): Promise<void> {
  const added = await app.inject({
    method: 'POST',
    url: `/api/v1/tenants/${owner.tenantId}/members`,
    headers: bearer(owner.token),
    payload: { email: member.email, role },
  });
  if (added.statusCode !== 201) throw new Error(`add member: ${added.statusCode} ${added.body}`);
}

export function bearer(credential: string): Record<string, string> {
  return { authorization: `Bearer ${credential}` };
}

/** Injects with a credential; `options` adds query, payload, headers. */
export function as(app: FastifyInstance, credential: string, options: InjectOptions & { url: string }) {
  return app.inject({ ...options, headers: { ...bearer(credential), ...options.headers } });
}

export interface CreatedWebhook {
  id: string;
  url: string;
  events: string[];
  signing_secret: string;
  created_at: string;
}

/**
 * Registers a webhook through the gateway; `fields` override the defaults, `query` picks the tenant.
 * The default address is loopback (the harness must allow private addresses): a test never makes the
 * platform deliver beyond this machine.
 */
export async function newWebhook(
  app: FastifyInstance,
  credential: string,
  fields: Record<string, unknown> = {},
  query: Record<string, string> = {},
): Promise<CreatedWebhook> {
  const payload = { url: 'http://127.0.0.1:9/hooks', events: ['agent.created'], ...fields };
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/webhooks', query, payload });
  if (created.statusCode !== 201) throw new Error(`webhook: ${created.statusCode} ${created.body}`);
  return created.json<CreatedWebhook>();
}
