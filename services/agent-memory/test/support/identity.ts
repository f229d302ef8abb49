import { randomBytes, randomUUID } from 'node:crypto';
import { buildIdentityService, loadIdentityConfig, migrations, openDatabase } from '@agent-platform/identity';
import type { Actor } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { createTestDatabase, type TestDatabaseOptions } from '@agent-platform/kit/testing';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { logger } from './harness.js';

/** The real identity on 127.0.0.1:0 over a database of its own: what agent-memory charges credits to. */
export interface IdentityPeer {
  billing: PromiseClient<typeof BillingServiceService>;
  /** The owner of a newly registered tenant, as the gateway would forward them. */
  register(): Promise<Actor>;
  stop(): Promise<void>;
}

const IDENTITY_DATABASE: TestDatabaseOptions = {
  name: 'identity',
  migrations,
  migrate: async (url) => {
    const orm = await openDatabase(url, logger);
    await orm.close();
  },
};

export async function startIdentity(): Promise<IdentityPeer> {
  const database = await createTestDatabase(IDENTITY_DATABASE);
  const config = loadIdentityConfig({ DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const bus = new InProcessEventBus({ consumers: [], logger });
  const service = await buildIdentityService(config, { logger, bus });
  const { port } = await service.start();
  const channel = new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 20_000 });
  const auth = channel.client(AuthServiceService);
  return {
    billing: channel.client(BillingServiceService),
    async register() {
      const { id, tenantId } = await auth.register({ email: `credits-${randomUUID()}@example.com`, password: `pw-${randomUUID()}` });
      return { kind: 'user', userId: id, tenantId, role: 'owner', scopes: [] };
    },
    async stop() {
      channel.close();
      await service.stop();
      await bus.close();
      await database.drop();
    },
  };
}
