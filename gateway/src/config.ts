import { z } from 'zod';
import { DOCUMENT_MAX_BYTES_DEFAULT, drainSettings, env, parseConfig } from '@agent-platform/kit';

/** Requests a plan may make in each fixed window; 0 means unlimited. */
export interface PlanLimits {
  perMinute: number;
  perDay: number;
}

const PLAN_ENTRY = /^([a-z][a-z0-9_-]*):(\d{1,9})\/(\d{1,9})$/;

/**
 * `free:60/1000,pro:600/50000,enterprise:0/0` → per plan, per-minute/per-day. Strict: every entry
 * must match, no plan twice, at least one plan. The first plan also serves unknown plan names.
 */
export const rateLimitsSchema = z.string().transform((raw, ctx): Map<string, PlanLimits> => {
  const plans = new Map<string, PlanLimits>();
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const match = PLAN_ENTRY.exec(entry);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not <plan>:<per-minute>/<per-day>` });
      return z.NEVER;
    }
    const [, plan = '', perMinute = '0', perDay = '0'] = match;
    if (plans.has(plan)) {
      ctx.addIssue({ code: 'custom', message: `plan "${plan}" is listed twice` });
      return z.NEVER;
    }
    plans.set(plan, { perMinute: Number(perMinute), perDay: Number(perDay) });
  }
  return plans;
});


const schema = z.object({
  PORT: env.port(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_BASE_URL: z.url().default('http://localhost:8080'),
  WEBHOOK_HOST: z.url().default('http://localhost:8080/hooks'),
  IDENTITY_ADDR: env.grpcTarget('127.0.0.1:50051'),
  AGENT_MEMORY_ADDR: env.grpcTarget('127.0.0.1:50052'),
  WEBHOOK_DISPATCHER_ADDR: env.grpcTarget('127.0.0.1:50054'),
  WORKFLOW_RUNNER_ADDR: env.grpcTarget('127.0.0.1:50053'),
  /** The workflow-runner's HTTP ingress, where `/hooks/*` is forwarded. */
  WORKFLOW_INGRESS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL' }).default('http://127.0.0.1:50063'),
  REDIS_URL: z.url().optional(),
  /** Prefix of every Redis key the gateway writes, so deployments can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default('gw:'),
  RATE_LIMITS: rateLimitsSchema.default(rateLimitsSchema.parse('free:60/1000,pro:600/50000,enterprise:0/0')),
  AUTH_RATE_LIMIT_PER_MINUTE: env.positiveInt(300),
  LOGIN_FAILURE_LIMIT: env.positiveInt(10),
  LOGIN_FAILURE_WINDOW_SECONDS: env.positiveInt(900),
  AUTH_CACHE_TTL_SECONDS: env.positiveInt(30),
  JWT_ISSUER: z.string().min(1).default('agent-platform'),
  JWT_AUDIENCE: z.string().min(1).default('agent-platform-api'),
  /** Least time between two JWKS fetches triggered by an unknown `kid` (milliseconds). */
  JWKS_REFRESH_MIN_INTERVAL_MS: z.coerce.number().int().min(0).default(10_000),
  GRPC_DEADLINE_MS: env.positiveInt(5_000),
  /** Deadline of POST /webhooks/{id}/test, which waits for the receiver: keep it above the dispatcher's WEBHOOK_TIMEOUT_MS. */
  WEBHOOK_TEST_DEADLINE_MS: env.positiveInt(15_000),
  /**
   * Deadline of the calls that wait for a model or an embedder (milliseconds): a chat turn,
   * streamed or not, with its tool rounds (several model calls and tool calls), a decision that
   * continues one, consolidation, a document's chunks. Each model call's own time-out is 60 s
   * (agent-memory's LLM_TIMEOUT_MS), so keep it well above that.
   */
  MODEL_DEADLINE_MS: env.positiveInt(300_000),
  /**
   * Deadline of creating, replacing and refreshing a tool, which waits for an mcp tool's server
   * to list its tools: keep it above agent-memory's TOOL_TIMEOUT_MS (30 s by default).
   */
  TOOL_DEADLINE_MS: env.positiveInt(35_000),
  /** Deadline of a synchronous execute (`async: false`), which waits up to 30 s for the run. */
  EXECUTE_DEADLINE_MS: env.positiveInt(35_000),
  /** On SIGTERM: SHUTDOWN_DELAY_MS of failing readiness while still serving, then SHUTDOWN_GRACE_MS for what is in flight (decisions §18.3). */
  ...drainSettings,
  TRUST_PROXY: env.boolean(false),
  BODY_LIMIT_BYTES: env.positiveInt(1_048_576),
  /** An uploaded document's file (decisions §17); agent-memory holds it to the same bound. */
  DOCUMENT_MAX_BYTES: env.positiveInt(DOCUMENT_MAX_BYTES_DEFAULT),
  LOG_LEVEL: env.logLevel(),
  /** The web console's built files (decisions §15); default: the @agent-platform/console package's dist/. */
  CONSOLE_DIR: z.string().min(1).optional(),
  /** Spans are exported only when set (kit telemetry); propagation is always on. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
});

export type GatewayConfig = z.output<typeof schema>;

/** Parses the gateway's environment once; a bad one throws a ConfigError, one line per variable. */
export function loadGatewayConfig(source: Record<string, string | undefined> = process.env): GatewayConfig {
  return parseConfig(schema, source);
}

/** The limits of `plan`; an unknown plan gets the first configured plan's limits. */
export function limitsOf(config: Pick<GatewayConfig, 'RATE_LIMITS'>, plan: string): PlanLimits {
  const limits = config.RATE_LIMITS.get(plan) ?? config.RATE_LIMITS.values().next().value;
  return limits ?? { perMinute: 0, perDay: 0 };
}
