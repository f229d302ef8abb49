import { env, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';

const natsUrl = z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' });

const schema = z
  .object({
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }),
    GRPC_HOST: z.string().min(1).default('0.0.0.0'),
    GRPC_PORT: env.port(50053),
    INGRESS_HOST: z.string().min(1).default('0.0.0.0'),
    INGRESS_PORT: env.port(50063),
    AGENT_MEMORY_ADDR: env.grpcTarget('127.0.0.1:50052'),
    GRPC_DEADLINE_MS: env.positiveInt(5_000),
    ALLOW_PRIVATE_NETWORK_URLS: env.boolean(false),
    NODE_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
    EXECUTION_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(300_000),
    EXECUTION_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(256),
    EXECUTION_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
    EXECUTION_POLL_INTERVAL_MS: env.positiveInt(1_000),
    SCHEDULE_POLL_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
    INBOUND_BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(16_777_216).default(1_048_576),
    SMTP_HOST: z.string().min(1).optional(),
    SMTP_PORT: env.port(587),
    SMTP_SECURE: env.boolean(false),
    SMTP_USER: z.string().min(1).optional(),
    SMTP_PASSWORD: z.string().optional(),
    SMTP_FROM: z.string().min(3).default('Agent Platform <workflows@localhost>'),
    LOG_LEVEL: env.logLevel(),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
    NATS_URL: natsUrl.optional(),
    OUTBOX_POLL_INTERVAL_MS: env.positiveInt(1_000),
    OUTBOX_RETRY_MAX_MS: env.positiveInt(30_000),
  })
  .superRefine((value, ctx) => {
    if (value.SMTP_USER && value.SMTP_PASSWORD === undefined) ctx.addIssue({ code: 'custom', path: ['SMTP_PASSWORD'], message: 'is required with SMTP_USER' });
  });

const distributedSchema = schema.safeExtend({ NATS_URL: natsUrl });

export type LogLevel = z.output<typeof schema>['LOG_LEVEL'];

export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string | undefined;
  password: string | undefined;
  from: string;
}

/** workflow-runner's settings, read once at start from the environment. */
export interface WorkflowRunnerConfig {
  databaseUrl: string;
  grpcHost: string;
  /** 0 picks a free port (tests). */
  grpcPort: number;
  /** The HTTP ingress the gateway forwards `/hooks/*` to. 0 picks a free port (tests). */
  ingressHost: string;
  ingressPort: number;
  /** agent-memory's gRPC address: agent nodes chat there. */
  agentMemoryAddr: string;
  grpcDeadlineMs: number;
  /** Lets http and slack integrations reach http:// and private addresses (development, tests). */
  allowPrivateNetworks: boolean;
  /** A node's time-out unless its config sets `timeout_ms`. */
  nodeTimeoutMs: number;
  /** Past it, an execution fails, whichever runner holds it. */
  executionTimeoutMs: number;
  /** Executions this runner works on at once. */
  executionConcurrency: number;
  /** How long a runner's hold on an execution lasts without renewal; then another may take it over. */
  executionLeaseMs: number;
  /** How often to look for executions nobody holds (overflow, runners that died). */
  executionPollIntervalMs: number;
  /** How often schedules are checked for a tick that is due, ms. */
  schedulePollIntervalMs: number;
  /** Largest inbound webhook body (413 above). */
  inboundBodyLimitBytes: number;
  /** undefined: email integration nodes fail with "not configured". */
  smtp: SmtpSettings | undefined;
  logLevel: LogLevel;
  otlpEndpoint: string | undefined;
  /** JetStream server of the distributed mode; undefined when the caller supplies the bus. */
  natsUrl: string | undefined;
  outboxPollIntervalMs: number;
  outboxRetryMaxMs: number;
}

/** Parses the environment; throws a ConfigError with one line per bad variable. */
export function loadWorkflowRunnerConfig(environment: Record<string, string | undefined>, options: { requireNats: true }): WorkflowRunnerConfig & { natsUrl: string };
export function loadWorkflowRunnerConfig(environment: Record<string, string | undefined>, options?: { requireNats?: boolean }): WorkflowRunnerConfig;
export function loadWorkflowRunnerConfig(environment: Record<string, string | undefined>, options: { requireNats?: boolean } = {}): WorkflowRunnerConfig {
  const parsed = parseConfig(options.requireNats ? distributedSchema : schema, environment);
  return {
    databaseUrl: parsed.DATABASE_URL,
    grpcHost: parsed.GRPC_HOST,
    grpcPort: parsed.GRPC_PORT,
    ingressHost: parsed.INGRESS_HOST,
    ingressPort: parsed.INGRESS_PORT,
    agentMemoryAddr: parsed.AGENT_MEMORY_ADDR,
    grpcDeadlineMs: parsed.GRPC_DEADLINE_MS,
    allowPrivateNetworks: parsed.ALLOW_PRIVATE_NETWORK_URLS,
    nodeTimeoutMs: parsed.NODE_TIMEOUT_MS,
    executionTimeoutMs: parsed.EXECUTION_TIMEOUT_MS,
    executionConcurrency: parsed.EXECUTION_CONCURRENCY,
    executionLeaseMs: parsed.EXECUTION_LEASE_MS,
    executionPollIntervalMs: parsed.EXECUTION_POLL_INTERVAL_MS,
    schedulePollIntervalMs: parsed.SCHEDULE_POLL_INTERVAL_MS,
    inboundBodyLimitBytes: parsed.INBOUND_BODY_LIMIT_BYTES,
    smtp: parsed.SMTP_HOST
      ? { host: parsed.SMTP_HOST, port: parsed.SMTP_PORT, secure: parsed.SMTP_SECURE, user: parsed.SMTP_USER, password: parsed.SMTP_PASSWORD, from: parsed.SMTP_FROM }
      : undefined,
    logLevel: parsed.LOG_LEVEL,
    otlpEndpoint: parsed.OTEL_EXPORTER_OTLP_ENDPOINT,
    natsUrl: parsed.NATS_URL,
    outboxPollIntervalMs: parsed.OUTBOX_POLL_INTERVAL_MS,
    outboxRetryMaxMs: parsed.OUTBOX_RETRY_MAX_MS,
  };
}
