import { IN_PROCESS_DRAIN, type Drain, type Logger } from '@agent-platform/kit';
import { assembleOnDatabase, classifyDbError, closeOrm, requestContext, type Orm } from '@agent-platform/kit/db';
import { OutboxRelay, type EventBus } from '@agent-platform/kit/events';
import { GrpcServer, type InProcessServing } from '@agent-platform/kit/grpc';
import { SecretBox } from '@agent-platform/kit/security';
import { ApiKeyServiceService } from '@agent-platform/proto/identity/v1/api-keys';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { API_KEY_SERVICE_NAME, apiKeyHandlers } from './api-keys/api-keys.grpc.js';
import { ApiKeysRepository } from './api-keys/api-keys.repository.js';
import { ApiKeysService } from './api-keys/api-keys.service.js';
import { AUTH_SERVICE_NAME, authHandlers } from './auth/auth.grpc.js';
import { AuthRepository } from './auth/auth.repository.js';
import { AuthService } from './auth/auth.service.js';
import { PasswordHasher } from './auth/passwords.js';
import { SigningKeys } from './auth/signing-keys.js';
import { BILLING_SERVICE_NAME, billingHandlers } from './billing/billing.grpc.js';
import { BillingRepository } from './billing/billing.repository.js';
import { BillingService } from './billing/billing.service.js';
import { ImmediatePaymentProvider, type PaymentProvider } from './billing/payment-provider.js';
import type { IdentityConfig } from './config.js';
import { openDatabase } from './database.js';
import { MEMBER_SERVICE_NAME, memberHandlers } from './tenants/tenants.grpc.js';
import { TenantsRepository } from './tenants/tenants.repository.js';
import { TenantsService } from './tenants/tenants.service.js';
import { USER_SERVICE_NAME, userHandlers } from './users/users.grpc.js';
import { UsersRepository } from './users/users.repository.js';
import { UsersService } from './users/users.service.js';

export { loadIdentityConfig, type IdentityConfig } from './config.js';
/** The schema's migrations, and the connection that applies them (test templates clone the result). */
export { migrations, openDatabase } from './database.js';

export interface IdentityService extends InProcessServing {
  start(): Promise<{ port: number }>;
  /** Drains (decisions §18.3); the all-in-one launcher's quick drain when none is given. */
  stop(drain?: Drain): Promise<void>;
}

export interface IdentityDeps {
  logger: Logger;
  /**
   * Where the outbox relay publishes billing events: NATS JetStream in the distributed mode, the
   * in-process bus in the all-in-one mode. The caller owns it and closes it after stop().
   */
  bus: EventBus;
  /** Defaults to the built-in provider, which grants purchases at once. */
  paymentProvider?: PaymentProvider;
}

// Bounds on shutdown: in-flight calls get this long before they are cut, then the pool this long.
const DB_CLOSE_TIMEOUT_MS = 5_000;

/**
 * The composition root: connects the database (applying migrations), wires repositories and
 * services with plain constructors, and registers them on one gRPC server. The local all-in-one
 * launcher and the end-to-end harness call this too.
 */
export async function buildIdentityService(config: IdentityConfig, deps: IdentityDeps): Promise<IdentityService> {
  return assembleOnDatabase(openDatabase(config.databaseUrl, deps.logger), (orm) => assemble(config, deps, orm));
}

function assemble(config: IdentityConfig, deps: IdentityDeps, orm: Orm): IdentityService {
  const em = orm.em;
  const users = new UsersRepository(em);
  const tenants = new TenantsRepository(em);
  const authRepository = new AuthRepository(em);
  const passwords = new PasswordHasher();
  const signingKeys = new SigningKeys({ em, repository: authRepository, secrets: new SecretBox([config.jwtKeyEncryptionKey]) });

  const billing = new BillingService({
    em,
    billing: new BillingRepository(em),
    tenants,
    paymentProvider: deps.paymentProvider ?? new ImmediatePaymentProvider(),
    lowCreditsThreshold: config.creditsLowThreshold,
  });
  const usersService = new UsersService({
    em,
    users,
    tenants,
    billing,
    passwords,
    defaultPlan: config.defaultPlan,
    welcomeCredits: config.welcomeCredits,
  });
  const tenantsService = new TenantsService({ tenants, users });
  const apiKeys = new ApiKeysService({ apiKeys: new ApiKeysRepository(em), tenants, users });
  const auth = new AuthService({
    em,
    users,
    repository: authRepository,
    passwords,
    signingKeys,
    accessToken: { issuer: config.jwtIssuer, audience: config.jwtAudience, ttlSeconds: config.accessTokenTtlSeconds },
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    logger: deps.logger,
  });

  const around = requestContext(orm);
  const server = new GrpcServer({ logger: deps.logger, around, classifyError: classifyDbError })
    .add(AUTH_SERVICE_NAME, AuthServiceService, authHandlers({ auth, users: usersService, apiKeys, tenants: tenantsService }))
    .add(USER_SERVICE_NAME, UserServiceService, userHandlers(usersService))
    .add(MEMBER_SERVICE_NAME, MemberServiceService, memberHandlers(tenantsService))
    .add(API_KEY_SERVICE_NAME, ApiKeyServiceService, apiKeyHandlers(apiKeys))
    .add(BILLING_SERVICE_NAME, BillingServiceService, billingHandlers(billing));

  const relay = new OutboxRelay({
    orm,
    bus: deps.bus,
    logger: deps.logger.child({ component: 'outbox-relay' }),
    pollIntervalMs: config.outboxPollIntervalMs,
    retry: { initialMs: 100, maxMs: config.outboxRetryMaxMs },
  });

  let started = false;
  return {
    inProcess: server.inProcess(),
    async start() {
      await around(() => signingKeys.load());
      const port = await server.listen(config.grpcHost, config.grpcPort);
      started = true;
      await relay.start();
      deps.logger.info({ host: config.grpcHost, port }, 'identity service listening');
      return { port };
    },
    async stop(drain = IN_PROCESS_DRAIN) {
      // GOAWAY at once: callers send what comes next to the other replicas; calls in flight finish.
      if (started) await server.stop(drain.graceMs);
      // After the server: calls in flight may still commit events, which the next start publishes.
      if (started) await relay.stop();
      started = false;
      if (!(await closeOrm(orm, DB_CLOSE_TIMEOUT_MS))) deps.logger.warn('database pool did not close in time');
    },
  };
}
