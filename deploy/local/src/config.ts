import { loadAgentMemoryConfig, type AgentMemoryConfig } from '@agent-platform/agent-memory/config';
import { loadGatewayConfig, type GatewayConfig } from '@agent-platform/gateway/config';
import { loadIdentityConfig, type IdentityConfig } from '@agent-platform/identity/config';
import { loadWebhookDispatcherConfig, type WebhookDispatcherConfig } from '@agent-platform/webhook-dispatcher/config';
import { loadWorkflowRunnerConfig, type WorkflowRunnerConfig } from '@agent-platform/workflow-runner/config';
import { env, parseAll, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';

/** The launcher's own settings. */
const schema = z.object({
  DATA_DIR: z.string().min(1).default('./.data'),
  PORT: env.port(8080),
  /** Unset: 54329 when free, else any free port (a second copy on this machine then has one too). */
  EMBEDDED_PG_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Use this PostgreSQL server instead of the embedded one; the service databases are created on it when missing. */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).optional(),
  /** Names the service databases `<prefix>identity`, …: several platforms can share one server. */
  DATABASE_NAME_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,40}$/, 'must be lower-case letters, digits and underscores')
    .default('agent_platform_'),
  /** Carry events over this NATS JetStream server instead of in process. */
  NATS_URL: z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' }).optional(),
  // 0: a port the system picks. Nothing outside this process needs these addresses (the launcher
  // hands the bound ones to the clients), so copies side by side never collide on them.
  IDENTITY_GRPC_PORT: env.port(0),
  AGENT_MEMORY_GRPC_PORT: env.port(0),
  WEBHOOK_DISPATCHER_GRPC_PORT: env.port(0),
  WORKFLOW_RUNNER_GRPC_PORT: env.port(0),
  /** The workflow-runner's inbound-webhook ingress (the gateway forwards /hooks/* there). */
  WORKFLOW_INGRESS_PORT: env.port(0),
  /** Encrypts webhook secrets at rest; without it one is made on first start and kept in DATA_DIR. */
  WEBHOOK_SECRET_KEY: env.aesKey().optional(),
  /** Seals tools' header values at rest; without it one is made on first start and kept in DATA_DIR. */
  TOOL_SECRET_KEY: env.aesKey().optional(),
  /** Seals the JWT signing keys at rest; without it one is made on first start and kept in DATA_DIR. */
  JWT_KEY_ENCRYPTION_KEY: env.aesKey().optional(),
  /**
   * How the services call each other in this process: `in-process` skips HTTP/2 (calls still
   * cross protobuf and the same handlers) and hands `/hooks` to the runner's ingress without a
   * socket; `network` uses the loopback ports as the distributed mode does.
   */
  GRPC_TRANSPORT: z.enum(['in-process', 'network']).default('in-process'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /**
   * Metrics are served at the gateway's `/metrics`; METRICS_PORT also opens a listener of their own
   * (the distributed mode's), on METRICS_HOST. Unset or "off": none.
   */
  METRICS_PORT: z
    .union([z.literal('off'), z.coerce.number().int().min(1).max(65535)], { error: 'must be a port number or "off"' })
    .optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // A laptop's terminal shows the banner and what needs a person, not every service's start-up.
  LOG_LEVEL: env.logLevel('warn'),
});

export interface LocalConfig {
  launcher: z.output<typeof schema>;
  /** Each service reads its own variables (WELCOME_CREDITS, RATE_LIMITS, …) as in the distributed mode. */
  identity: IdentityConfig;
  agentMemory: AgentMemoryConfig;
  webhookDispatcher: WebhookDispatcherConfig;
  workflowRunner: WorkflowRunnerConfig;
  gateway: GatewayConfig;
}

// What the launcher assigns itself once it knows (database addresses, ports). Placeholders here
// let each service's own variables be checked before anything starts.
const ASSIGNED_BY_LAUNCHER = {
  DATABASE_URL: 'postgres://launcher@127.0.0.1/assigned-at-start',
  GRPC_HOST: '127.0.0.1',
  GRPC_PORT: '0',
  IDENTITY_ADDR: '127.0.0.1:0',
  AGENT_MEMORY_ADDR: '127.0.0.1:0',
  WEBHOOK_DISPATCHER_ADDR: '127.0.0.1:0',
  WORKFLOW_RUNNER_ADDR: '127.0.0.1:0',
  WORKFLOW_INGRESS_URL: 'http://127.0.0.1:0',
  INGRESS_HOST: '127.0.0.1',
  INGRESS_PORT: '0',
};

// Stands in for keys the launcher makes on first start, when the environment brings none.
const PLACEHOLDER_SECRET_KEYS = {
  WEBHOOK_SECRET_KEY: Buffer.alloc(32).toString('base64'),
  JWT_KEY_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'),
  TOOL_SECRET_KEY: Buffer.alloc(32).toString('base64'),
};

/** The addresses that only this machine can call the API on. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * While the API answers on loopback only (HOST unset), its only callers are this machine's own,
 * who can reach its private addresses anyway: tools, workflows and webhooks may then call them (a
 * receiver, a model server on localhost) unless ALLOW_PRIVATE_NETWORK_URLS says otherwise. A HOST
 * that others reach keeps the SSRF guard whole (decisions §8.3).
 */
function privateTargetsDefault(source: Record<string, string | undefined>): Record<string, string> {
  return LOOPBACK_HOSTS.has(source.HOST ?? '127.0.0.1') ? { ALLOW_PRIVATE_NETWORK_URLS: 'true' } : {};
}

/** Every bad variable of the launcher and of every service, in one error. */
export function loadLocalConfig(source: Record<string, string | undefined> = process.env): LocalConfig {
  const assigned = { ...PLACEHOLDER_SECRET_KEYS, ...privateTargetsDefault(source), ...source, ...ASSIGNED_BY_LAUNCHER };
  // Inbound webhook addresses follow the gateway's port unless WEBHOOK_HOST says otherwise.
  const webhookHost = source.PORT !== undefined && source.PORT !== '0' ? { WEBHOOK_HOST: `http://localhost:${source.PORT}/hooks` } : {};
  const [launcher, identity, agentMemory, webhookDispatcher, workflowRunner, gateway] = parseAll(
    () => parseConfig(schema, source),
    () => loadIdentityConfig(assigned),
    () => loadAgentMemoryConfig(assigned),
    () => loadWebhookDispatcherConfig(assigned),
    () => loadWorkflowRunnerConfig(assigned),
    // On a laptop the API answers on loopback only, unless HOST says otherwise.
    () => loadGatewayConfig({ HOST: '127.0.0.1', ...webhookHost, ...assigned }),
  );
  return { launcher, identity, agentMemory, webhookDispatcher, workflowRunner, gateway };
}
