import { DOCUMENT_MAX_BYTES_DEFAULT, env, parseConfig } from '@agent-platform/kit';
import { z } from 'zod';

const natsUrl = z.url({ protocol: /^(nats|tls)$/, error: 'must be a nats:// URL' });
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL' });

const schema = z
  .object({
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }),
    GRPC_HOST: z.string().min(1).default('0.0.0.0'),
    GRPC_PORT: env.port(50052),
    IDENTITY_ADDR: env.grpcTarget('127.0.0.1:50051'),
    WORKFLOW_RUNNER_ADDR: env.grpcTarget('127.0.0.1:50053'),
    TOOL_SECRET_KEY: env.aesKey(),
    ALLOW_PRIVATE_NETWORK_URLS: env.boolean(false),
    GRPC_DEADLINE_MS: env.positiveInt(5_000),
    TOOL_TIMEOUT_MS: env.positiveInt(30_000),
    LLM_BASE_URL: httpUrl.optional(),
    LLM_API_KEY: z.string().optional(),
    LLM_MODEL: z.string().min(1).optional(),
    LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
    LLM_MAX_TOKENS_FIELD: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    EMBEDDING_BASE_URL: httpUrl.optional(),
    EMBEDDING_API_KEY: z.string().optional(),
    EMBEDDING_MODEL: z.string().min(1).optional(),
    EMBEDDING_DIMENSIONS: z.coerce.number().int().min(8).max(8_192).optional(),
    ALLOW_OFFLINE_MODEL: env.boolean(false),
    QDRANT_URL: httpUrl.optional(),
    QDRANT_API_KEY: z.string().optional(),
    VECTOR_INDEX_DIR: z.string().min(1).optional(),
    CHAT_HISTORY_MESSAGES: z.coerce.number().int().min(0).max(200).default(20),
    CHAT_MEMORY_RESULTS: z.coerce.number().int().min(0).max(50).default(5),
    CONSOLIDATION_INTERVAL_SECONDS: z.coerce.number().int().min(0).default(0),
    CONSOLIDATION_KEEP_MESSAGES: z.coerce.number().int().min(0).max(1_000).default(20),
    EXTRACTION_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    RUN_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
    BACKGROUND_RUN_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    DOCUMENT_MAX_BYTES: env.positiveInt(DOCUMENT_MAX_BYTES_DEFAULT),
    DOCUMENT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    DOCUMENT_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    DOCUMENT_LEASE_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
    DOCUMENT_READ_MEMORY_MB: z.coerce.number().int().min(64).max(16_384).default(256),
    EXTRACTION_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
    EXTRACTION_RETRY_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
    LOG_LEVEL: env.logLevel(),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
    NATS_URL: natsUrl.optional(),
    OUTBOX_POLL_INTERVAL_MS: env.positiveInt(1_000),
    OUTBOX_RETRY_MAX_MS: env.positiveInt(30_000),
  })
  .superRefine((value, ctx) => {
    if (value.LLM_BASE_URL && !value.LLM_MODEL) ctx.addIssue({ code: 'custom', path: ['LLM_MODEL'], message: 'is required with LLM_BASE_URL' });
    if (value.EMBEDDING_BASE_URL && !value.EMBEDDING_MODEL) {
      ctx.addIssue({ code: 'custom', path: ['EMBEDDING_MODEL'], message: 'is required with EMBEDDING_BASE_URL' });
    }
    if (value.EMBEDDING_BASE_URL && !value.EMBEDDING_DIMENSIONS) {
      ctx.addIssue({ code: 'custom', path: ['EMBEDDING_DIMENSIONS'], message: 'is required with EMBEDDING_BASE_URL (the length of the vectors the model returns)' });
    }
  });

/**
 * decisions §18: outside the all-in-one mode the built-in offline model and embedder are
 * stand-ins that would answer (and charge) every tenant with an echo: refused unless said.
 */
const distributedSchema = schema.safeExtend({ NATS_URL: natsUrl }).superRefine((value, ctx) => {
  if (value.ALLOW_OFFLINE_MODEL) return;
  const unless = 'set ALLOW_OFFLINE_MODEL=true to run on it anyway';
  if (!value.LLM_BASE_URL) {
    ctx.addIssue({ code: 'custom', path: ['LLM_BASE_URL'], message: `is required outside the all-in-one mode: without it every tenant is answered by the built-in offline model; ${unless}` });
  }
  if (!value.EMBEDDING_BASE_URL) {
    ctx.addIssue({ code: 'custom', path: ['EMBEDDING_BASE_URL'], message: `is required outside the all-in-one mode: without it memory is embedded by the built-in offline embedder; ${unless}` });
  }
});

export type LogLevel = z.output<typeof schema>['LOG_LEVEL'];

export interface OpenAICompatibleEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
}

/** agent-memory's settings, read once at start from the environment. */
export interface AgentMemoryConfig {
  databaseUrl: string;
  grpcHost: string;
  /** 0 picks a free port (tests). */
  grpcPort: number;
  /** identity's gRPC address: credits are checked and charged there. */
  identityAddr: string;
  /** workflow-runner's gRPC address: a workflow tool's workflow is checked there. */
  workflowRunnerAddr: string;
  /** AES-256-GCM key that seals tools' header values at rest. Never logged. */
  toolSecretKey: Buffer;
  /** Development and tests only: lets http and mcp tools use http and private, loopback or link-local addresses. */
  allowPrivateNetworkUrls: boolean;
  /** Deadline of calls to identity and workflow-runner, ms. */
  grpcDeadlineMs: number;
  /** Bound on one tool call of a chat turn (a workflow tool waits at most 30,000 of it), and on asking an MCP server for its tools at save and refresh, ms. */
  toolTimeoutMs: number;
  /** An OpenAI-compatible chat server; undefined: the built-in offline model answers. */
  llm: (OpenAICompatibleEndpoint & { maxTokensField: 'max_tokens' | 'max_completion_tokens' }) | undefined;
  /** Bound on a model call, and on each silence within a streamed answer, ms. */
  llmTimeoutMs: number;
  /** An OpenAI-compatible embeddings server; undefined: the built-in hybrid embedder. */
  embedding: (OpenAICompatibleEndpoint & { dimensions: number }) | undefined;
  /** Qdrant; undefined: the embedded index. */
  qdrant: { url: string; apiKey: string | undefined } | undefined;
  /** Where the embedded index is persisted; undefined: kept in memory and rebuilt at start. */
  vectorIndexDir: string | undefined;
  /** Earlier messages of a session put into the model's context. */
  chatHistoryMessages: number;
  /** Memories of the agent put into the model's context per turn. */
  chatMemoryResults: number;
  /** Period of the consolidation job, s; 0 = off (POST …/memory/consolidate still works). */
  consolidationIntervalSeconds: number;
  /** The newest messages of each session that consolidation leaves as they are. */
  consolidationKeepMessages: number;
  /** decisions §16: runs begun longer ago than this many days are deleted. */
  runRetentionDays: number;
  /** Background runs this replica runs at once (decisions §16). */
  backgroundRunConcurrency: number;
  /** Turns whose memories this replica extracts at once (decisions §14). */
  extractionConcurrency: number;
  /** decisions §17: the largest document original, uploaded or fetched. */
  documentMaxBytes: number;
  /** Documents each replica parses, embeds and stores at once. */
  documentConcurrency: number;
  /** A web page's whole fetch, redirects included. */
  documentFetchTimeoutMs: number;
  /** The heap a reading thread may grow to while it parses and chunks one document. */
  documentReadMemoryMb: number;
  /** A replica's claim of a document, renewed every third of it while it works: how soon another takes over from a replica that died. */
  documentLeaseMs: number;
  /** Attempts of one turn's extraction before it is left failed. */
  extractionMaxAttempts: number;
  /** Back-off after a failed extraction attempt, doubling after each (up to 5 minutes). */
  extractionRetryMs: number;
  logLevel: LogLevel;
  otlpEndpoint: string | undefined;
  /** JetStream server of the distributed mode; undefined when the caller supplies the bus. */
  natsUrl: string | undefined;
  outboxPollIntervalMs: number;
  outboxRetryMaxMs: number;
}

/** Parses the environment; throws a ConfigError with one line per bad variable. */
export function loadAgentMemoryConfig(environment: Record<string, string | undefined>, options: { requireNats: true }): AgentMemoryConfig & { natsUrl: string };
export function loadAgentMemoryConfig(environment: Record<string, string | undefined>, options?: { requireNats?: boolean }): AgentMemoryConfig;
export function loadAgentMemoryConfig(environment: Record<string, string | undefined>, options: { requireNats?: boolean } = {}): AgentMemoryConfig {
  const parsed = parseConfig(options.requireNats ? distributedSchema : schema, environment);
  return {
    databaseUrl: parsed.DATABASE_URL,
    grpcHost: parsed.GRPC_HOST,
    grpcPort: parsed.GRPC_PORT,
    identityAddr: parsed.IDENTITY_ADDR,
    workflowRunnerAddr: parsed.WORKFLOW_RUNNER_ADDR,
    toolSecretKey: parsed.TOOL_SECRET_KEY,
    allowPrivateNetworkUrls: parsed.ALLOW_PRIVATE_NETWORK_URLS,
    grpcDeadlineMs: parsed.GRPC_DEADLINE_MS,
    toolTimeoutMs: parsed.TOOL_TIMEOUT_MS,
    llm:
      parsed.LLM_BASE_URL && parsed.LLM_MODEL
        ? { baseUrl: parsed.LLM_BASE_URL, apiKey: parsed.LLM_API_KEY, model: parsed.LLM_MODEL, maxTokensField: parsed.LLM_MAX_TOKENS_FIELD }
        : undefined,
    llmTimeoutMs: parsed.LLM_TIMEOUT_MS,
    embedding:
      parsed.EMBEDDING_BASE_URL && parsed.EMBEDDING_MODEL && parsed.EMBEDDING_DIMENSIONS
        ? { baseUrl: parsed.EMBEDDING_BASE_URL, apiKey: parsed.EMBEDDING_API_KEY, model: parsed.EMBEDDING_MODEL, dimensions: parsed.EMBEDDING_DIMENSIONS }
        : undefined,
    qdrant: parsed.QDRANT_URL ? { url: parsed.QDRANT_URL, apiKey: parsed.QDRANT_API_KEY } : undefined,
    vectorIndexDir: parsed.VECTOR_INDEX_DIR,
    chatHistoryMessages: parsed.CHAT_HISTORY_MESSAGES,
    chatMemoryResults: parsed.CHAT_MEMORY_RESULTS,
    consolidationIntervalSeconds: parsed.CONSOLIDATION_INTERVAL_SECONDS,
    consolidationKeepMessages: parsed.CONSOLIDATION_KEEP_MESSAGES,
    runRetentionDays: parsed.RUN_RETENTION_DAYS,
    backgroundRunConcurrency: parsed.BACKGROUND_RUN_CONCURRENCY,
    extractionConcurrency: parsed.EXTRACTION_CONCURRENCY,
    documentMaxBytes: parsed.DOCUMENT_MAX_BYTES,
    documentConcurrency: parsed.DOCUMENT_CONCURRENCY,
    documentFetchTimeoutMs: parsed.DOCUMENT_FETCH_TIMEOUT_MS,
    documentLeaseMs: parsed.DOCUMENT_LEASE_MS,
    documentReadMemoryMb: parsed.DOCUMENT_READ_MEMORY_MB,
    extractionMaxAttempts: parsed.EXTRACTION_MAX_ATTEMPTS,
    extractionRetryMs: parsed.EXTRACTION_RETRY_MS,
    logLevel: parsed.LOG_LEVEL,
    otlpEndpoint: parsed.OTEL_EXPORTER_OTLP_ENDPOINT,
    natsUrl: parsed.NATS_URL,
    outboxPollIntervalMs: parsed.OUTBOX_POLL_INTERVAL_MS,
    outboxRetryMaxMs: parsed.OUTBOX_RETRY_MAX_MS,
  };
}
