import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { IN_PROCESS_DRAIN, systemClock, type Actor, type Clock, type Drain, type Logger } from '@agent-platform/kit';
import { assembleOnDatabase, classifyDbError, closeOrm, PgNotifications, requestContext, type Orm } from '@agent-platform/kit/db';
import { OutboxRelay, type EventBus } from '@agent-platform/kit/events';
import { GrpcChannel, GrpcServer, type ChannelTransport, type InProcessServing } from '@agent-platform/kit/grpc';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { DatasetServiceService } from '@agent-platform/proto/agents/v1/datasets';
import { DocumentServiceService } from '@agent-platform/proto/agents/v1/documents';
import { EvalServiceService } from '@agent-platform/proto/agents/v1/evals';
import { MemoryServiceService } from '@agent-platform/proto/agents/v1/memory';
import { RunServiceService } from '@agent-platform/proto/agents/v1/runs';
import { ToolServiceService } from '@agent-platform/proto/agents/v1/tools';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { ExecutionServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { OutboundHttp, OutboundPolicy, SecretBox, type HostResolver } from '@agent-platform/kit/security';
import { AGENT_SERVICE_NAME, agentHandlers } from './agents/agents.grpc.js';
import { AgentVersionsRepository } from './agents/agent-versions.repository.js';
import { AgentsRepository } from './agents/agents.repository.js';
import { AgentsService } from './agents/agents.service.js';
import { RecentAgents } from './agents/recent-agents.js';
import { CHAT_SERVICE_NAME, chatHandlers } from './chat/chat.grpc.js';
import { ChatRepository } from './chat/chat.repository.js';
import { ChatService } from './chat/chat.service.js';
import { IdentityCredits, type Credits } from './chat/credits.js';
import { SessionsService } from './chat/sessions.service.js';
import { UnchargedRounds } from './chat/uncharged-rounds.js';
import type { AgentMemoryConfig } from './config.js';
import { DATASET_SERVICE_NAME, datasetHandlers } from './datasets/datasets.grpc.js';
import { DatasetsRepository } from './datasets/datasets.repository.js';
import { DatasetsService } from './datasets/datasets.service.js';
import { DOCUMENT_SERVICE_NAME, documentHandlers } from './documents/documents.grpc.js';
import { assembleDocuments } from './documents/assemble.js';
import { EvalRuns } from './evals/eval-runs.js';
import { EVAL_SERVICE_NAME, evalHandlers } from './evals/evals.grpc.js';
import { EvalsRepository } from './evals/evals.repository.js';
import { EvalsService } from './evals/evals.service.js';
import { openDatabase } from './database.js';
import { ConsolidationService } from './memory/consolidation.service.js';
import { ExtractionRepository } from './memory/extraction.repository.js';
import { ExtractionService } from './memory/extraction.service.js';
import { ExtractionWorker } from './memory/extraction-worker.js';
import { MEMORY_SERVICE_NAME, memoryHandlers } from './memory/memory.grpc.js';
import { MemoryBulkDeleteRepository } from './memory/memory-bulk-delete.repository.js';
import { MemoryHistoryRepository } from './memory/memory-history.repository.js';
import { MemoryRepository } from './memory/memory.repository.js';
import { MemorySearchRepository } from './memory/memory-search.repository.js';
import { MemoryService } from './memory/memory.service.js';
import { Reembedding } from './memory/reembedding.js';
import { ReembeddingRepository } from './memory/reembedding.repository.js';
import { vectorSource } from './memory/vector-source.js';
import type { ChatModel } from './models/chat-model.js';
import type { Embedder } from './models/embedder.js';
import { chatModelFrom, embedderFrom } from './models/select.js';
import { RUN_SERVICE_NAME, runHandlers } from './runs/runs.grpc.js';
import { BackgroundRuns } from './runs/background-runs.js';
import { RunLeases } from './runs/run-leases.js';
import { RUN_PROGRESS_CHANNEL, RunsRepository } from './runs/runs.repository.js';
import { RunsService } from './runs/runs.service.js';
import { vectorStoreFrom } from './vectors/select.js';
import { IdentityPrincipals, type Principals } from './tools/principals.js';
import { AgentTools } from './tools/agent-tools.js';
import type { AgentTurns } from './tools/kinds/tool-kind.js';
import { TOOL_KINDS } from './tools/kinds/tool-kinds.js';
import { callsOfEveryKind, ToolRunner } from './tools/tool-runner.js';
import { McpClient } from './tools/mcp-client.js';
import { TOOL_SERVICE_NAME, toolHandlers } from './tools/tools.grpc.js';
import { ToolsRepository } from './tools/tools.repository.js';
import { ToolsService } from './tools/tools.service.js';
import { GrpcWorkflowDirectory } from './tools/workflow-directory.js';
import type { VectorStore } from './vectors/vector-store.js';

export { loadAgentMemoryConfig, type AgentMemoryConfig } from './config.js';
/** The schema's migrations, and the connection that applies them (test templates clone the result). */
export { migrations, openDatabase } from './database.js';
/** What each tool type does on the platform for its caller (decisions §12), for the suites that hold every type to it. */
export { TOOL_ACCESS } from './tools/tool-access.js';
/** Up to this many vectors an agent's index searches exactly and builds no HNSW graph. */
export { DEFAULT_EXACT_SEARCH_MAX_VECTORS } from './vectors/embedded-vector-store.js';

export interface AgentMemoryService extends InProcessServing {
  /** The tenants' agents: a turn on a past version reads it through atVersion; tests call it directly. */
  readonly agents: AgentsService;
  /** Runs one tool call (decisions §12.7), wired as configured: the chat turn runs calls through it; tests call it directly. */
  readonly toolRunner: ToolRunner;
  start(): Promise<{ port: number }>;
  /** Drains (decisions §18.3); the all-in-one launcher's quick drain when none is given. */
  stop(drain?: Drain): Promise<void>;
}

export interface AgentMemoryDeps {
  logger: Logger;
  /** Where the outbox relay publishes agent events; the caller owns it and closes it after stop(). */
  bus: EventBus;
  /** Adapters chosen from the configuration unless given (tests). */
  model?: ChatModel;
  embedder?: Embedder;
  vectors?: VectorStore;
  credits?: Credits;
  /** Whether a turn's credential still holds at each tool call; default: asked of identity. */
  principals?: Principals;
  /** identity in this process (the all-in-one mode) instead of at IDENTITY_ADDR. */
  identityTransport?: ChannelTransport;
  /**
   * workflow-runner in this process, or its address, asked for at the first workflow check rather
   * than at start: workflow-runner calls agent-memory too, so one of the two starts first.
   * Absent: WORKFLOW_RUNNER_ADDR.
   */
  workflowRunnerTransport?: () => ChannelTransport | string;
  /** Name resolution of the outbound address policy (tests). */
  resolveHost?: HostResolver;
  /** What chat turns read the time from and wait on; default: the system's (tests move their own). */
  clock?: Clock;
}

const EXTRACTION_POLL_INTERVAL_MS = 1_000;
/** Items re-embedded per transaction after an embedder change: some 20 ms of the offline embedder's work for 1,000-character chunks. */
const REEMBED_BATCH_SIZE = 100;
/** How soon a replica looks again at items other replicas hold locked (or after a failed batch). */
const REEMBED_POLL_INTERVAL_MS = 1_000;
/** A background run's claim; renewed every third of it while the run goes on. */
const BACKGROUND_RUN_LEASE_MS = 15_000;
const BACKGROUND_RUN_POLL_INTERVAL_MS = 1_000;
/** Results scored at once per replica; an eval's runs are what bounds its pace, not its scoring. */
const EVAL_SCORING_CONCURRENCY = 4;
const EVAL_POLL_INTERVAL_MS = 1_000;
/** How often a replica charges rounds left uncharged; every replica may, a round is charged once. */
const UNCHARGED_SWEEP_INTERVAL_MS = 30_000;
/** How often a replica deletes runs past their retention; every replica may, the deletes do not collide. */
const RUN_RETENTION_INTERVAL_MS = 3_600_000;
/** What http tools' requests say they are; a tool's own `User-Agent` header replaces it. */
const TOOLS_USER_AGENT = 'AgentPlatform-Tools/1.0';
const DB_CLOSE_TIMEOUT_MS = 5_000;

/**
 * The composition root: connects the database (applying migrations), chooses the model, embedder
 * and vector store from the configuration, wires repositories and services with plain
 * constructors and registers them on one gRPC server. The local launcher and the tests call it.
 */
export async function buildAgentMemoryService(config: AgentMemoryConfig, deps: AgentMemoryDeps): Promise<AgentMemoryService> {
  return assembleOnDatabase(openDatabase(config.databaseUrl, deps.logger), (orm) => assemble(config, deps, orm));
}

function assemble(config: AgentMemoryConfig, deps: AgentMemoryDeps, orm: Orm): AgentMemoryService {
  const { logger } = deps;
  const em = orm.em;
  const model = deps.model ?? chatModelFrom(config);
  const embedder = deps.embedder ?? embedderFrom(config);
  const vectors = deps.vectors ?? vectorStoreFrom(config, embedder, logger.child({ component: 'vector-store' }));
  const identity = deps.credits && deps.principals ? undefined : new GrpcChannel(deps.identityTransport ?? config.identityAddr, { defaultDeadlineMs: config.grpcDeadlineMs });
  const credits = deps.credits ?? new IdentityCredits(identity!.client(BillingServiceService));
  const principals = deps.principals ?? new IdentityPrincipals(identity!.client(AuthServiceService));

  let workflowRunner: GrpcChannel | undefined;
  const workflowRunnerChannel = () => (workflowRunner ??= new GrpcChannel(deps.workflowRunnerTransport?.() ?? config.workflowRunnerAddr, { defaultDeadlineMs: config.grpcDeadlineMs }));

  const agentsRepository = new AgentsRepository(em);
  const toolsRepository = new ToolsRepository(em);
  const memoryRepository = new MemoryRepository(em);
  const memoryBulkDeletes = new MemoryBulkDeleteRepository(em);
  const chatRepository = new ChatRepository(em);
  const runsRepository = new RunsRepository(em);
  const policy = new OutboundPolicy({ allowPrivateNetworks: config.allowPrivateNetworkUrls, ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}) });
  const secrets = new SecretBox([config.toolSecretKey]);
  const workflowDirectory = new GrpcWorkflowDirectory(() => workflowRunnerChannel().client(WorkflowServiceService));
  // Every request to a tool's server (http, mcp) leaves through this guarded client: the policy
  // that checked a tool's URL at save checks it again at connect time.
  const outboundHttp = new OutboundHttp({ policy, userAgent: TOOLS_USER_AGENT });
  const mcp = new McpClient({ http: outboundHttp, timeoutMs: config.toolTimeoutMs });
  const agentDirectory = { exists: async (actor: Actor, agentId: string) => (await agentsRepository.find(actor.tenantId, agentId)) !== null };
  const tools = new ToolsService({ em, tools: toolsRepository, secrets, policy, workflows: workflowDirectory, agents: agentDirectory, mcp });
  // Agent tools run turns of the chat service, which is built below, after the tools it runs:
  // asked for at a call, it is there.
  const agentTurns = (): AgentTurns => ({ turn: (request) => chat.agentTurn(request) });
  const callServices = { http: outboundHttp, secrets, executions: () => workflowRunnerChannel().client(ExecutionServiceService), mcp, agentTurns, timeoutMs: config.toolTimeoutMs };
  const toolRunner = new ToolRunner({
    kinds: callsOfEveryKind((type) => TOOL_KINDS[type].calls(callServices)),
    principals,
    timeoutMs: config.toolTimeoutMs,
    logger: logger.child({ component: 'tools' }),
  });
  const recentAgents = new RecentAgents(agentsRepository);
  const agents = new AgentsService({ em, agents: agentsRepository, versions: new AgentVersionsRepository(em), tools: toolsRepository, recentAgents, forgetVectors: (tenantId, agentId) => vectors.deleteAgent(tenantId, agentId), logger });
  const around = requestContext(orm);
  const reembedding = new Reembedding({
    em,
    items: new ReembeddingRepository(em),
    embedder,
    vectors,
    inContext: around,
    batchSize: REEMBED_BATCH_SIZE,
    pollIntervalMs: REEMBED_POLL_INTERVAL_MS,
    logger: logger.child({ component: 'reembedding' }),
  });
  const memory = new MemoryService({ em, agents: agentsRepository, recentAgents, memory: memoryRepository, search: new MemorySearchRepository(em), history: new MemoryHistoryRepository(em), bulkDeletes: memoryBulkDeletes, embedder, vectors, logger, notYetReembedded: () => reembedding.models });
  /** This replica, as the leases of its workers name it. */
  const replica = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const extractionQueue = new ExtractionRepository(em, replica);
  const extraction = new ExtractionService({
    em,
    agents: agentsRepository,
    memory: memoryRepository,
    memoryService: memory,
    queue: extractionQueue,
    runs: runsRepository,
    embedder,
    vectors,
    model,
    credits,
    maxAttempts: config.extractionMaxAttempts,
    retryInitialMs: config.extractionRetryMs,
    logger: logger.child({ component: 'memory-extraction' }),
  });
  const extractionWorker = new ExtractionWorker({
    queue: extractionQueue,
    process: (job, signal) => around(() => extraction.process(job, signal)),
    concurrency: config.extractionConcurrency,
    // Two model calls, the embedder and the writes, each bounded by LLM_TIMEOUT_MS at most.
    leaseMs: 4 * config.llmTimeoutMs,
    pollIntervalMs: EXTRACTION_POLL_INTERVAL_MS,
    logger,
  });
  const clock = deps.clock ?? systemClock;
  const chat = new ChatService({
    em,
    agents: agentsRepository,
    versions: agents,
    chat: chatRepository,
    runs: runsRepository,
    memory,
    model,
    credits,
    tools: new AgentTools(toolsRepository, toolRunner),
    toolTimeoutMs: config.toolTimeoutMs,
    historyMessages: config.chatHistoryMessages,
    memoryResults: config.chatMemoryResults,
    extraction: { enqueue: (job, now) => extractionQueue.enqueue(job, now), queued: () => extractionWorker.wake() },
    logger,
    clock,
  });
  const runProgress = new PgNotifications({ clientUrl: config.databaseUrl, channel: RUN_PROGRESS_CHANNEL, logger: logger.child({ component: 'run-progress' }), applicationName: 'run-progress' });
  // Declared before the runs' workers, which wake it when an eval's run ends.
  let evalRuns: EvalRuns | undefined = undefined;
  const backgroundRuns = new BackgroundRuns({
    runs: runsRepository,
    leases: new RunLeases(em),
    run: (claimed, signal) => chat.runQueued(claimed, signal),
    fail: (claimed, error) => chat.failQueued(claimed, error),
    ended: (claimed) => {
      if (claimed.trigger === 'eval') evalRuns?.wake();
    },
    inContext: around,
    owner: replica,
    // A turn's model calls and tools each have their own time-outs; the lease only has to outlive a renewal.
    leaseMs: BACKGROUND_RUN_LEASE_MS,
    concurrency: config.backgroundRunConcurrency,
    pollIntervalMs: BACKGROUND_RUN_POLL_INTERVAL_MS,
    logger,
  });
  const runs = new RunsService({ runs: runsRepository, progress: runProgress, agents: agentsRepository, retentionDays: config.runRetentionDays, clock, logger: logger.child({ component: 'runs' }) });
  const unchargedRounds = new UnchargedRounds({ chat: chatRepository, credits, clock, logger: logger.child({ component: 'uncharged-rounds' }) });
  const sessions = new SessionsService({ agents: agentsRepository, chat: chatRepository });
  const datasetsRepository = new DatasetsRepository(em);
  const datasets = new DatasetsService({ em, datasets: datasetsRepository, clock });
  const evalsRepository = new EvalsRepository(em);
  evalRuns = new EvalRuns({
    em,
    evals: evalsRepository,
    runs: runsRepository,
    model,
    wakeRuns: () => backgroundRuns.wake(),
    inContext: around,
    // A judge's call is bounded by LLM_TIMEOUT_MS; each scorer of a result may make one.
    leaseMs: 4 * config.llmTimeoutMs,
    concurrency: EVAL_SCORING_CONCURRENCY,
    pollIntervalMs: EVAL_POLL_INTERVAL_MS,
    clock,
    logger: logger.child({ component: 'eval-runs' }),
  });
  const feeder = evalRuns;
  const evals = new EvalsService({
    em,
    evals: evalsRepository,
    datasets: datasetsRepository,
    agentAt: (actor, agentId, version) => chat.agentAt(actor, agentId, version),
    credits,
    feed: (evalId) => feeder.feed(evalId),
    clock,
  });
  const { documents, workers: documentWorkers, reader: documentReader } = assembleDocuments({
    em,
    replica,
    agents: agentsRepository,
    memory: memoryRepository,
    bulkDeletes: memoryBulkDeletes,
    memoryService: memory,
    embedder,
    policy,
    http: outboundHttp,
    config,
    inContext: around,
    logger,
  });
  const consolidation = new ConsolidationService({ em, agents: agentsRepository, memory, model, keepMessages: config.consolidationKeepMessages, logger });

  const server = new GrpcServer({ logger, around, classifyError: classifyDbError })
    .add(AGENT_SERVICE_NAME, AgentServiceService, agentHandlers(agents))
    .add(CHAT_SERVICE_NAME, ChatServiceService, chatHandlers(chat, sessions))
    .add(MEMORY_SERVICE_NAME, MemoryServiceService, memoryHandlers(memory, consolidation))
    .add(DOCUMENT_SERVICE_NAME, DocumentServiceService, documentHandlers(documents))
    .add(TOOL_SERVICE_NAME, ToolServiceService, toolHandlers(tools))
    .add(RUN_SERVICE_NAME, RunServiceService, runHandlers(runs, chat, () => backgroundRuns.wake()))
    .add(DATASET_SERVICE_NAME, DatasetServiceService, datasetHandlers(datasets))
    .add(EVAL_SERVICE_NAME, EvalServiceService, evalHandlers(evals));

  const relay = new OutboxRelay({
    orm,
    bus: deps.bus,
    logger: logger.child({ component: 'outbox-relay' }),
    pollIntervalMs: config.outboxPollIntervalMs,
    retry: { initialMs: 100, maxMs: config.outboxRetryMaxMs },
  });
  const consolidating = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let retentionTimer: NodeJS.Timeout | undefined;
  let chargeTimer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  let started = false;
  return {
    inProcess: server.inProcess(),
    agents,
    toolRunner,
    async start() {
      const opened = Date.now();
      await vectors.open(vectorSource(em, embedder.model));
      logger.info({ vector_store: vectors.kind, embedder: embedder.model, model: model.name, ms: Date.now() - opened }, 'memory index ready');
      const port = await server.listen(config.grpcHost, config.grpcPort);
      started = true;
      await relay.start();
      reembedding.start();
      extractionWorker.start();
      documentWorkers.start();
      runProgress.start();
      backgroundRuns.start();
      feeder.start();
      const forgetOldRuns = () => {
        running = running.then(() => around(() => runs.forgetOld())).catch((error: unknown) => logger.warn({ err: error }, 'deleting old runs failed'));
      };
      forgetOldRuns();
      retentionTimer = setInterval(forgetOldRuns, RUN_RETENTION_INTERVAL_MS);
      const chargeLeftovers = () => {
        running = running.then(() => around(() => unchargedRounds.chargeAll())).catch((error: unknown) => logger.warn({ err: error }, 'charging rounds left uncharged failed'));
      };
      chargeLeftovers();
      chargeTimer = setInterval(chargeLeftovers, UNCHARGED_SWEEP_INTERVAL_MS);
      if (config.consolidationIntervalSeconds > 0) {
        timer = setInterval(() => {
          running = running.then(() => around(() => consolidation.consolidateAll(consolidating.signal))).catch((error: unknown) => logger.warn({ err: error }, 'consolidation run failed'));
        }, config.consolidationIntervalSeconds * 1_000);
      }
      logger.info({ host: config.grpcHost, port }, 'agent-memory service listening');
      return { port };
    },
    async stop(drain = IN_PROCESS_DRAIN) {
      clearInterval(timer);
      clearInterval(retentionTimer);
      clearInterval(chargeTimer);
      consolidating.abort();
      // GOAWAY to callers (chat turns in flight finish), and extraction jobs in flight finish, each
      // within the grace; the jobs left wait for their leases to end and another replica's claim.
      // Background runs still going when the grace ends are left to their leases: another replica
      // takes them up.
      await Promise.all([
        running,
        started ? server.stop(drain.graceMs) : undefined,
        extractionWorker.stop(drain.graceMs),
        documentWorkers.stop(drain.graceMs),
        backgroundRuns.stop(drain.graceMs),
        feeder.stop(drain.graceMs),
        reembedding.stop(drain.graceMs),
      ]);
      await Promise.all([runProgress.stop(), documentReader.close()]);
      if (started) await relay.stop();
      started = false;
      identity?.close();
      workflowRunner?.close();
      outboundHttp.close();
      await vectors.close();
      if (!(await closeOrm(orm, DB_CLOSE_TIMEOUT_MS))) logger.warn('database pool did not close in time');
    },
  };
}
