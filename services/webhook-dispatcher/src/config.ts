import { env, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';
import { parseRetrySchedule } from './deliveries/retry-schedule.js';

const retrySchedule = z
  .string()
  .default('0,60,300,1800,7200')
  .transform((value, ctx) => {
    const parsed = parseRetrySchedule(value);
    if (typeof parsed === 'string') {
      ctx.addIssue({ code: 'custom', message: parsed });
      return z.NEVER;
    }
    return parsed;
  });

const schema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }),
  GRPC_HOST: z.string().min(1).default('0.0.0.0'),
  GRPC_PORT: env.port(50054),
  WEBHOOK_SECRET_KEY: env.aesKey(),
  ALLOW_PRIVATE_NETWORK_URLS: env.boolean(false),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule,
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  NATS_URL: z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' }).default('nats://localhost:4222'),
  LOG_LEVEL: env.logLevel(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
});

export type LogLevel = z.output<typeof schema>['LOG_LEVEL'];

/** The webhook dispatcher's settings, read once at start from the environment. */
export interface WebhookDispatcherConfig {
  databaseUrl: string;
  grpcHost: string;
  /** 0 picks a free port (tests). */
  grpcPort: number;
  /** AES-256-GCM key that encrypts endpoint secrets at rest. Never logged. */
  secretKey: Buffer;
  /** Development and tests only: lets endpoints use http and private, loopback or link-local addresses. */
  allowPrivateNetworkUrls: boolean;
  /**
   * Seconds to wait before each attempt: entry n is the delay before attempt n + 1 (the first is
   * the delay of the first attempt, normally 0). Its length is the number of attempts.
   */
  retryScheduleSeconds: readonly number[];
  /** Whole-request budget of one delivery attempt, connect to last byte read. */
  timeoutMs: number;
  /** HTTP attempts in flight at once in this process. */
  deliveryConcurrency: number;
  /** JetStream server; only main.ts connects (the local launcher passes its in-process bus). */
  natsUrl: string;
  logLevel: LogLevel;
  /** OTLP/HTTP collector; spans are exported only when set. */
  otlpEndpoint: string | undefined;
}

/** Parses the environment; throws a ConfigError with one line per bad variable. */
export function loadWebhookDispatcherConfig(environment: Record<string, string | undefined>): WebhookDispatcherConfig {
  const parsed = parseConfig(schema, environment);
  return {
    databaseUrl: parsed.DATABASE_URL,
    grpcHost: parsed.GRPC_HOST,
    grpcPort: parsed.GRPC_PORT,
    secretKey: parsed.WEBHOOK_SECRET_KEY,
    allowPrivateNetworkUrls: parsed.ALLOW_PRIVATE_NETWORK_URLS,
    retryScheduleSeconds: parsed.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: parsed.WEBHOOK_TIMEOUT_MS,
    deliveryConcurrency: parsed.DELIVERY_CONCURRENCY,
    natsUrl: parsed.NATS_URL,
    logLevel: parsed.LOG_LEVEL,
    otlpEndpoint: parsed.OTEL_EXPORTER_OTLP_ENDPOINT,
  };
}
