import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '@agent-platform/kit';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { buildGateway, loadGatewayConfig, type Gateway, type GatewayConfig } from '../gateway.js';
import { AgentMemoryDouble } from './agent-memory-double.js';
import { IdentityDouble } from './identity-double.js';
import { WebhooksDouble } from './webhooks-double.js';
import { WorkflowRunnerDouble } from './workflow-runner-double.js';

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

export interface Harness {
  identity: IdentityDouble;
  agentMemory: AgentMemoryDouble;
  webhooks: WebhooksDouble;
  workflowRunner: WorkflowRunnerDouble;
  gateway: Gateway;
  app: FastifyInstance;
  config: GatewayConfig;
  close(): Promise<void>;
}

/** A gateway in front of identity, agent-memory and webhook-dispatcher doubles on loopback; `env` overrides the gateway's variables. */
export async function startHarness(env: Record<string, string> = {}, logger?: Logger): Promise<Harness> {
  const identity = new IdentityDouble();
  const agentMemory = new AgentMemoryDouble();
  const webhooks = new WebhooksDouble();
  const workflowRunner = new WorkflowRunnerDouble();
  const [identityAddr, agentMemoryAddr, webhooksAddr, workflowRunnerAddr] = await Promise.all([identity.start(), agentMemory.start(), webhooks.start(), workflowRunner.start()]);
  const config = loadGatewayConfig({
    IDENTITY_ADDR: identityAddr,
    AGENT_MEMORY_ADDR: agentMemoryAddr,
    WEBHOOK_DISPATCHER_ADDR: webhooksAddr,
    WORKFLOW_RUNNER_ADDR: workflowRunnerAddr,
    LOG_LEVEL: 'silent',
    RATE_LIMITS: 'free:10000/100000,pro:20000/200000',
    AUTH_RATE_LIMIT_PER_MINUTE: '10000',
    JWKS_REFRESH_MIN_INTERVAL_MS: '0',
    GRPC_DEADLINE_MS: '2000',
    ...env,
  });
  const gateway = await buildGateway(config, { logger: logger ?? createLogger({ service: 'gateway-test', level: 'silent' }) });
  return {
    identity,
    agentMemory,
    webhooks,
    workflowRunner,
    gateway,
    app: gateway.app,
    config,
    async close() {
      await gateway.stop();
      await Promise.all([identity.stop(), agentMemory.stop(), webhooks.stop(), workflowRunner.stop()]);
    },
  };
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(6).toString('hex')}@example.com`;
}

/** A unique Redis key prefix, so tests sharing one Redis never see each other's keys. */
export function uniquePrefix(): string {
  return `gwtest:${randomUUID()}:`;
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

/** Waits, when needed, so the next few seconds stay inside one fixed minute window. */
export async function awayFromMinuteEdge(seconds = 5): Promise<void> {
  const left = 60 - ((Date.now() / 1000) % 60);
  if (left < seconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
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

/** Registers a webhook through the gateway; `fields` override the defaults, `query` picks the tenant. */
export async function newWebhook(
  app: FastifyInstance,
  credential: string,
  fields: Record<string, unknown> = {},
  query: Record<string, string> = {},
): Promise<CreatedWebhook> {
  const payload = { url: 'https://receiver.example.com/hooks', events: ['agent.created'], ...fields };
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/webhooks', query, payload });
  if (created.statusCode !== 201) throw new Error(`webhook: ${created.statusCode} ${created.body}`);
  return created.json<CreatedWebhook>();
}
