import { env, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';
import { PLANS, type Plan } from './tenants/plans.js';

/** The payment providers there are: only the immediate one (decisions §9), a stand-in for a real one. */
const PAYMENT_PROVIDERS = ['immediate'] as const;

const natsUrl = z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' });

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }),
  GRPC_HOST: z.string().min(1).default('0.0.0.0'),
  GRPC_PORT: env.port(50051),
  WELCOME_CREDITS: z.coerce.number().int().min(0).default(1000),
  CREDITS_LOW_THRESHOLD: z.coerce.number().int().min(0).default(100),
  DEFAULT_PLAN: z.enum(PLANS).default('free'),
  ACCESS_TOKEN_TTL_SECONDS: env.positiveInt(3600),
  REFRESH_TOKEN_TTL_SECONDS: env.positiveInt(2_592_000),
  JWT_ISSUER: z.string().min(1).default('agent-platform'),
  JWT_AUDIENCE: z.string().min(1).default('agent-platform-api'),
  JWT_KEY_ENCRYPTION_KEY: env.aesKey(),
  LOG_LEVEL: env.logLevel(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  NATS_URL: natsUrl.optional(),
  OUTBOX_POLL_INTERVAL_MS: env.positiveInt(1_000),
  OUTBOX_RETRY_MAX_MS: env.positiveInt(30_000),
  PAYMENT_PROVIDER: z.enum(PAYMENT_PROVIDERS).optional(),
});

// The distributed process publishes to NATS; the all-in-one launcher hands in its in-process bus.
// decisions §18: it also refuses to sell credits through the immediate provider, which grants them
// without charging anyone, unless that is said: a production mesh must not do it unawares.
const distributedSchema = schema.extend({
  NATS_URL: natsUrl,
  PAYMENT_PROVIDER: z.enum(PAYMENT_PROVIDERS, {
    error: (issue) =>
      issue.input === undefined
        ? 'is required outside the all-in-one mode: the only provider, immediate, grants purchased credits without charging anyone; set PAYMENT_PROVIDER=immediate to run with it'
        : `must be one of ${PAYMENT_PROVIDERS.join(', ')}`,
  }),
});

export type LogLevel = z.output<typeof schema>['LOG_LEVEL'];

/** The identity service's settings, read once at start from the environment. */
export interface IdentityConfig {
  databaseUrl: string;
  grpcHost: string;
  /** 0 picks a free port (tests). */
  grpcPort: number;
  /** Credits a new tenant starts with. */
  welcomeCredits: number;
  /** billing.credits.low fires when a debit crosses below this balance. */
  creditsLowThreshold: number;
  defaultPlan: Plan;
  /** Seconds. */
  accessTokenTtlSeconds: number;
  /** Seconds. */
  refreshTokenTtlSeconds: number;
  jwtIssuer: string;
  jwtAudience: string;
  /** AES-256-GCM key that seals the private JWT signing keys at rest. Never logged. */
  jwtKeyEncryptionKey: Buffer;
  logLevel: LogLevel;
  /** OTLP/HTTP collector; spans are exported only when set. */
  otlpEndpoint: string | undefined;
  /** JetStream server of the distributed mode; undefined when the caller supplies the bus. */
  natsUrl: string | undefined;
  /** The outbox relay's fallback poll (it wakes on NOTIFY first), ms. */
  outboxPollIntervalMs: number;
  /** Cap of the relay's back-off while the bus rejects, ms. */
  outboxRetryMaxMs: number;
}

export interface LoadIdentityConfigOptions {
  /** True for `main` (distributed mode): NATS_URL must be set. */
  requireNats?: boolean;
}

/** Parses the environment; throws a ConfigError with one line per bad variable. */
export function loadIdentityConfig(
  environment: Record<string, string | undefined>,
  options: { requireNats: true },
): IdentityConfig & { natsUrl: string };
export function loadIdentityConfig(environment: Record<string, string | undefined>, options?: LoadIdentityConfigOptions): IdentityConfig;
export function loadIdentityConfig(environment: Record<string, string | undefined>, options: LoadIdentityConfigOptions = {}): IdentityConfig {
  const parsed = parseConfig(options.requireNats ? distributedSchema : schema, environment);
  return {
    databaseUrl: parsed.DATABASE_URL,
    grpcHost: parsed.GRPC_HOST,
    grpcPort: parsed.GRPC_PORT,
    welcomeCredits: parsed.WELCOME_CREDITS,
    creditsLowThreshold: parsed.CREDITS_LOW_THRESHOLD,
    defaultPlan: parsed.DEFAULT_PLAN,
    accessTokenTtlSeconds: parsed.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: parsed.REFRESH_TOKEN_TTL_SECONDS,
    jwtIssuer: parsed.JWT_ISSUER,
    jwtAudience: parsed.JWT_AUDIENCE,
    jwtKeyEncryptionKey: parsed.JWT_KEY_ENCRYPTION_KEY,
    logLevel: parsed.LOG_LEVEL,
    otlpEndpoint: parsed.OTEL_EXPORTER_OTLP_ENDPOINT,
    natsUrl: parsed.NATS_URL,
    outboxPollIntervalMs: parsed.OUTBOX_POLL_INTERVAL_MS,
    outboxRetryMaxMs: parsed.OUTBOX_RETRY_MAX_MS,
  };
}
