import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@agent-platform/kit';
import { InProcessEventBus, type Delivery, type EventBus, type EventEnvelope } from '@agent-platform/kit/events';
import { GrpcChannel, PrincipalKind, type Principal, type PromiseClient } from '@agent-platform/kit/grpc';
import { databaseFixture, type TestDatabase } from '@agent-platform/kit/testing';
import { ApiKeyServiceService } from '@agent-platform/proto/identity/v1/api-keys';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { test as base } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';
import { buildIdentityService, loadIdentityConfig, type IdentityConfig, type IdentityService } from '../src/service.js';

export const logger = createLogger({ service: 'identity-test', level: 'silent' });

/** A registered user, with what a test needs to act as them. */
export interface TestUser {
  id: string;
  email: string;
  password: string;
  tenantId: string;
  /** The owner principal in the user's own tenant, as the gateway would forward it. */
  principal: Principal;
}

/** The running service plus typed clients and the service's database. */
export interface IdentityHarness {
  config: IdentityConfig;
  database: TestDatabase;
  auth: PromiseClient<typeof AuthServiceService>;
  users: PromiseClient<typeof UserServiceService>;
  members: PromiseClient<typeof MemberServiceService>;
  apiKeys: PromiseClient<typeof ApiKeyServiceService>;
  billing: PromiseClient<typeof BillingServiceService>;
  /** Registers a fresh user (unique e-mail) and returns them. */
  register(overrides?: { email?: string; password?: string; fullName?: string; company?: string }): Promise<TestUser>;
  /** Starts another instance of the service on the same database, e.g. a second replica. */
  startReplica(): Promise<{ address: string; stop(): Promise<void> }>;
  /** What the service published on its event bus (an in-process bus shared by its replicas). */
  events: PublishedEvents;
}

/** The events a test harness's bus received, in the order they were handled. */
export interface PublishedEvents {
  readonly received: readonly { envelope: EventEnvelope<object>; delivery: Delivery }[];
  /** Waits for the first event of `type` for `tenantId` and returns it. */
  waitFor(type: string, tenantId: string): Promise<{ envelope: EventEnvelope<object>; delivery: Delivery }>;
}

/** Durable name of the harness's recording consumer. */
const RECORDER = 'identity-test-recorder';
/** How long `events.waitFor` waits for its event before failing; ms. */
const WAIT_TIMEOUT_MS = 5_000;

/** An in-process bus with one consumer that records every event, as a subscriber service would. */
async function recordingBus(): Promise<{ bus: EventBus; events: PublishedEvents }> {
  const bus = new InProcessEventBus({ consumers: [RECORDER], logger });
  const received: { envelope: EventEnvelope<object>; delivery: Delivery }[] = [];
  /** Re-checked on every event received. */
  const watchers = new Set<() => void>();
  await bus.subscribe({
    name: RECORDER,
    filter: 'events.>',
    concurrency: 8,
    handle: (envelope, delivery) => {
      received.push({ envelope, delivery });
      for (const watcher of watchers) watcher();
      return Promise.resolve();
    },
  });
  const find = (type: string, tenantId: string) => received.find(({ envelope }) => envelope.type === type && envelope.tenant_id === tenantId);
  return {
    bus,
    events: {
      received,
      waitFor: (type, tenantId) =>
        new Promise((resolve, reject) => {
          const check = () => {
            const found = find(type, tenantId);
            if (!found) return;
            stop();
            resolve(found);
          };
          const timer = setTimeout(() => (stop(), reject(new Error(`no ${type} event for ${tenantId} within ${WAIT_TIMEOUT_MS} ms`))), WAIT_TIMEOUT_MS);
          const stop = () => {
            clearTimeout(timer);
            watchers.delete(check);
          };
          watchers.add(check);
          check();
        }),
    },
  };
}

/** A bus nobody consumes from, for services a test starts outside the fixture. */
export function silentBus(): EventBus {
  return new InProcessEventBus({ consumers: [], logger });
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID()}@example.com`;
}

/** The principal the gateway would forward for `userId` acting in `tenantId` with `role`. */
export function userPrincipal(userId: string, tenantId: string, role: string): Principal {
  return { kind: PrincipalKind.KIND_USER, userId, apiKeyId: '', tenantId, role, scopes: [] };
}

export { expectError } from '@agent-platform/kit/testing';

/** Seals the test services' private signing keys (JWT_KEY_ENCRYPTION_KEY). */
export const JWT_KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64');

/** The service's settings for a test database, on a free loopback port. */
export function testConfig(database: TestDatabase, overrides: Record<string, string> = {}): IdentityConfig {
  return loadIdentityConfig({ DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', JWT_KEY_ENCRYPTION_KEY, ...overrides });
}

export async function startService(database: TestDatabase, bus: EventBus, overrides: Record<string, string> = {}) {
  const config = testConfig(database, overrides);
  const service: IdentityService = await buildIdentityService(config, { logger, bus });
  const { port } = await service.start();
  return { config, service, address: `127.0.0.1:${port}` };
}

/**
 * `test` with two file-scoped fixtures: `database`, a fresh database cloned from the migrated
 * template, and `identity`, the real service listening on 127.0.0.1:0 against it.
 */
export const test = base
  .extend(
    'database',
    { scope: 'file' },
    databaseFixture({
      name: 'identity',
      migrations,
      migrate: async (url) => {
        const orm = await openDatabase(url, logger);
        await orm.close();
      },
    }),
  )
  .extend('identity', { scope: 'file' }, async ({ database }, { onCleanup }): Promise<IdentityHarness> => {
    const { bus, events } = await recordingBus();
    const { config, service, address } = await startService(database, bus);
    const channel = new GrpcChannel(address, { defaultDeadlineMs: 15_000 });
    const replicas: { stop(): Promise<void> }[] = [];
    onCleanup(async () => {
      channel.close();
      await Promise.all(replicas.map((replica) => replica.stop()));
      await service.stop();
      await bus.close();
    });

    const auth = channel.client(AuthServiceService);
    return {
      config,
      database,
      auth,
      users: channel.client(UserServiceService),
      members: channel.client(MemberServiceService),
      apiKeys: channel.client(ApiKeyServiceService),
      billing: channel.client(BillingServiceService),
      async register(overrides = {}) {
        const email = overrides.email ?? uniqueEmail();
        const password = overrides.password ?? `pw-${randomUUID()}`;
        const registered = await auth.register({ email, password, fullName: overrides.fullName, company: overrides.company });
        return {
          id: registered.id,
          email: registered.email,
          password,
          tenantId: registered.tenantId,
          principal: userPrincipal(registered.id, registered.tenantId, 'owner'),
        };
      },
      events,
      async startReplica() {
        // The same bus: whichever replica's relay holds the lock publishes to it.
        const replica = await startService(database, bus);
        const handle = { address: replica.address, stop: () => replica.service.stop() };
        replicas.push(handle);
        return handle;
      },
    };
  });
