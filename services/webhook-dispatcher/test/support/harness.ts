import { randomBytes } from 'node:crypto';
import { createLogger, newId } from '@agent-platform/kit';
import { InProcessEventBus, newEvent, type EventBus, type EventEnvelope } from '@agent-platform/kit/events';
import { GrpcChannel, PrincipalKind, type Principal, type PromiseClient } from '@agent-platform/kit/grpc';
import { databaseFixture, startReceiver, type TestDatabase } from '@agent-platform/kit/testing';
import { WebhookServiceService, type Delivery, type Webhook } from '@agent-platform/proto/webhooks/v1';
import { expect, test as base, vi } from 'vitest';
import { migrations, openDatabase } from '../../src/database.js';
import type { HostResolver } from '@agent-platform/kit/security';
import {
  buildWebhookDispatcherService,
  CONSUMER_NAME,
  loadWebhookDispatcherConfig,
  type WebhookDispatcherConfig,
} from '../../src/service.js';

export const logger = createLogger({ service: 'webhook-dispatcher-test', level: 'silent' });

export type WebhookClient = PromiseClient<typeof WebhookServiceService>;

/** A running dispatcher with its own bus and a client to it. */
export interface Instance {
  config: WebhookDispatcherConfig;
  client: WebhookClient;
  bus: EventBus;
  /** Publishes an event on this instance's bus; resolves once it has been fanned out. */
  publish(tenantId: string, type: string, data?: object): Promise<EventEnvelope<object>>;
  stop(): Promise<void>;
}

export interface TestTenant {
  tenantId: string;
  /** An admin user of the tenant, as the gateway would forward them. */
  principal: Principal;
}

export interface DispatcherHarness extends Instance {
  database: TestDatabase;
  /** Another instance on the same database (a replica), stopped with the file. */
  startInstance(overrides?: InstanceOptions): Promise<Instance>;
}

export interface InstanceOptions {
  env?: Record<string, string>;
  resolveHost?: HostResolver;
  /** Default: an in-process bus of the instance's own. */
  bus?: EventBus;
  subjectPrefix?: string;
}

export function newTenant(role = 'admin'): TestTenant {
  const tenantId = newId('tenant');
  return { tenantId, principal: principalOf(tenantId, role) };
}

export function principalOf(tenantId: string, role = 'admin', kind = PrincipalKind.KIND_USER, scopes: string[] = []): Principal {
  return { kind, userId: newId('user'), apiKeyId: kind === PrincipalKind.KIND_API_KEY ? newId('apiKey') : '', tenantId, role, scopes };
}

export { expectError } from '@agent-platform/kit/testing';

/** Creates a webhook for the tenant and returns it with its signing secret. */
export async function createWebhook(
  client: WebhookClient,
  tenant: TestTenant,
  url: string,
  events: string[] = ['*'],
  secret?: string,
): Promise<{ webhook: Webhook; secret: string }> {
  const created = await client.createWebhook({ url, events, secret }, { principal: tenant.principal });
  return { webhook: created.webhook!, secret: created.signingSecret };
}

/** The whole delivery log of a webhook, newest first. */
export async function deliveriesOf(client: WebhookClient, tenant: TestTenant, webhookId: string): Promise<Delivery[]> {
  const items: Delivery[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listDeliveries({ webhookId, page: { limit: 100, cursor } }, { principal: tenant.principal });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** Polls the delivery log until `check` passes (it throws until then). */
export async function waitForDeliveries<T>(
  client: WebhookClient,
  tenant: TestTenant,
  webhookId: string,
  check: (deliveries: Delivery[]) => T,
  timeoutMs = 10_000,
): Promise<T> {
  return vi.waitFor(async () => check(await deliveriesOf(client, tenant, webhookId)), { timeout: timeoutMs, interval: 50 });
}

/** Polls until the webhook has `status`. */
export async function waitForWebhookStatus(client: WebhookClient, tenant: TestTenant, webhookId: string, status: string, timeoutMs = 15_000): Promise<void> {
  await vi.waitFor(
    async () => {
      const { webhook } = await client.getWebhook({ webhookId }, { principal: tenant.principal });
      expect(webhook?.status).toBe(status);
    },
    { timeout: timeoutMs, interval: 100 },
  );
}

/**
 * A marker for "nothing more was sent": returns once the dispatcher has sent a retry due one retry
 * delay from now (a fresh tenant's endpoint fails its first attempt; its retry lands). Whatever was
 * due by then would have been claimed with that retry or before it, so a test that waits for this
 * and then sees no further request has shown none was due. Needs a retry schedule of `0,<s>,…`.
 */
export async function afterOneRetryDelay(instance: Instance, timeoutMs = 15_000): Promise<void> {
  let calls = 0;
  const receiver = await startReceiver(() => ({ status: (calls += 1) === 1 ? 500 : 204 }));
  const tenant = newTenant();
  await createWebhook(instance.client, tenant, receiver.url('/marker'));
  await instance.publish(tenant.tenantId, 'agent.created');
  await receiver.waitFor(2, { timeoutMs });
}

/** The environment of a test instance: a fresh key per file, loopback gRPC on a free port. */
export function testEnvironment(database: TestDatabase, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    WEBHOOK_SECRET_KEY: FILE_SECRET_KEY,
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ...overrides,
  };
}

// One key per test file: every instance of a file must read the others' secrets.
const FILE_SECRET_KEY = randomBytes(32).toString('base64');

export async function startInstance(database: TestDatabase, options: InstanceOptions = {}): Promise<Instance> {
  const config = loadWebhookDispatcherConfig(testEnvironment(database, options.env));
  const bus = options.bus ?? new InProcessEventBus({ consumers: [CONSUMER_NAME], logger, retry: { initialMs: 50, maxMs: 200 } });
  const service = await buildWebhookDispatcherService(config, {
    logger,
    bus,
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    ...(options.subjectPrefix ? { subjectPrefix: options.subjectPrefix } : {}),
  });
  const { port } = await service.start();
  // Test sends can take the whole delivery time-out; the deadline must outlast it.
  const channel = new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 30_000 });
  let stopped = false;
  return {
    config,
    client: channel.client(WebhookServiceService),
    bus,
    async publish(tenantId, type, data = {}) {
      const event = newEvent(type, tenantId, data);
      await bus.publish(event);
      return event;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      channel.close();
      await service.stop();
      if (!options.bus) await bus.close();
    },
  };
}

/** `test` with a file-scoped `database`: a fresh database cloned from the migrated template. */
export const databaseTest = base.extend(
  'database',
  { scope: 'file' },
  databaseFixture({
    name: 'webhooks',
    migrations,
    migrate: async (url) => {
      const orm = await openDatabase(url, logger);
      await orm.close();
    },
  }),
);

/**
 * `databaseTest` plus a file-scoped `dispatcher`: the real service on 127.0.0.1:0 against that
 * database, configured with `options`.
 */
export function dispatcherTest(options: InstanceOptions = {}) {
  return databaseTest.extend('dispatcher', { scope: 'file' }, async ({ database }, { onCleanup }): Promise<DispatcherHarness> => {
    const main = await startInstance(database, options);
    const others: Instance[] = [];
    onCleanup(async () => {
      await Promise.all(others.map((instance) => instance.stop()));
      await main.stop();
    });
    return {
      ...main,
      database,
      async startInstance(overrides = {}) {
        const instance = await startInstance(database, { ...options, ...overrides, env: { ...options.env, ...overrides.env } });
        others.push(instance);
        return instance;
      },
    };
  });
}
