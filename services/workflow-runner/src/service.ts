import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { HttpDrain, IN_PROCESS_DRAIN, systemClock, type Clock, type Drain, type InProcessHttp, type Logger } from '@agent-platform/kit';
import { assembleOnDatabase, classifyDbError, closeOrm, requestContext, type Orm } from '@agent-platform/kit/db';
import { observeBacklog } from '@agent-platform/kit/telemetry';
import { OutboxRelay, type EventBus } from '@agent-platform/kit/events';
import { GrpcChannel, GrpcServer, type ChannelTransport, type InProcessServing } from '@agent-platform/kit/grpc';
import { OutboundHttp, OutboundPolicy, type HostResolver } from '@agent-platform/kit/security';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { ExecutionServiceService, InboundServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { GrpcAgentChat, type AgentChat } from './agents/agent-chat.js';
import { GrpcAgentDirectory, type AgentDirectory } from './agents/agent-directory.js';
import type { WorkflowRunnerConfig } from './config.js';
import { openDatabase } from './database.js';
import { ExecutionRunner } from './engine/execution-runner.js';
import { NodeRunners } from './engine/node-runners.js';
import { ExecutionLeases } from './executions/execution-leases.js';
import { ExecutionStore } from './executions/execution-store.js';
import { ExecutionWorker } from './executions/execution-worker.js';
import { EXECUTION_SERVICE_NAME, executionHandlers } from './executions/executions.grpc.js';
import { ExecutionsRepository } from './executions/executions.repository.js';
import { ExecutionsService } from './executions/executions.service.js';
import { WaitingExecutions } from './executions/waiting-executions.js';
import { INBOUND_SERVICE_NAME, inboundHandlers } from './ingress/inbound.grpc.js';
import { InboundService } from './ingress/inbound.service.js';
import { buildIngress, inProcessIngress } from './ingress/ingress-server.js';
import { EmailSender } from './integrations/email-integration.js';
import { Integrations } from './integrations/integrations.js';
import { Scheduler } from './schedules/scheduler.js';
import { WorkflowVersionsRepository } from './versions/versions.repository.js';
import { WorkflowVersionsService } from './versions/versions.service.js';
import { WORKFLOW_SERVICE_NAME, workflowHandlers } from './workflows/workflows.grpc.js';
import { WorkflowsRepository } from './workflows/workflows.repository.js';
import { WorkflowsService } from './workflows/workflows.service.js';

export { loadWorkflowRunnerConfig, type WorkflowRunnerConfig } from './config.js';
/** The schema's migrations, and the connection that applies them (test templates clone the result). */
export { migrations, openDatabase } from './database.js';

export interface WorkflowRunnerService extends InProcessServing {
  /** `port` is gRPC's, `ingressPort` the inbound webhooks' HTTP port. */
  start(): Promise<{ port: number; ingressPort: number }>;
  /** The inbound webhooks' ingress without its port, for the all-in-one gateway's `/hooks`. */
  readonly inProcessIngress: InProcessHttp;
  /** Drains (decisions §18.3); the all-in-one launcher's quick drain when none is given. */
  stop(drain?: Drain): Promise<void>;
}

export interface WorkflowRunnerDeps {
  logger: Logger;
  /** Where the outbox relay publishes execution events; the caller owns it and closes it after stop(). */
  bus: EventBus;
  /** Adapters chosen from the configuration unless given (tests). */
  agents?: AgentChat;
  /** Which agents a tenant has, asked when a graph is saved (decisions §13.2). */
  agentDirectory?: AgentDirectory;
  /** agent-memory in this process (the all-in-one mode) instead of at AGENT_MEMORY_ADDR. */
  agentMemoryTransport?: ChannelTransport;
  /** Resolves integration host names for the SSRF guard and for connecting; default the system's. */
  resolveHost?: HostResolver;
  /** When waiting executions are due, retries' back-off and executions' time-outs; default the system's (tests move a ManualClock). */
  clock?: Clock;
}

const USER_AGENT = 'AgentPlatform-Workflows/1.0';
// Bounds on shutdown: executions in flight, then calls in flight, then the pool.
const DB_CLOSE_TIMEOUT_MS = 5_000;

/**
 * The composition root: connects the database (applying migrations), wires the workflow and
 * execution services, the engine, the execution worker, the scheduler, the inbound ingress and
 * one gRPC server. The local launcher and the tests call it.
 */
export async function buildWorkflowRunnerService(config: WorkflowRunnerConfig, deps: WorkflowRunnerDeps): Promise<WorkflowRunnerService> {
  return assembleOnDatabase(openDatabase(config.databaseUrl, deps.logger), (orm) => assemble(config, deps, orm));
}

function assemble(config: WorkflowRunnerConfig, deps: WorkflowRunnerDeps, orm: Orm): WorkflowRunnerService {
  const { logger } = deps;
  const em = orm.em;
  const owner = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const policy = new OutboundPolicy({ allowPrivateNetworks: config.allowPrivateNetworks, ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}) });
  const http = new OutboundHttp({ policy, userAgent: USER_AGENT });
  const email = new EmailSender({ smtp: config.smtp });
  const agentMemory =
    deps.agents && deps.agentDirectory ? undefined : new GrpcChannel(deps.agentMemoryTransport ?? config.agentMemoryAddr, { defaultDeadlineMs: config.grpcDeadlineMs });
  const agents = deps.agents ?? new GrpcAgentChat(agentMemory!.client(ChatServiceService));
  const agentDirectory = deps.agentDirectory ?? new GrpcAgentDirectory(agentMemory!.client(AgentServiceService));

  const workflowsRepository = new WorkflowsRepository(em);
  const executionsRepository = new ExecutionsRepository(em);
  const clock = deps.clock ?? systemClock;
  const store = new ExecutionStore(em, { owner, leaseMs: config.executionLeaseMs });
  const waiting = new WaitingExecutions(em, { owner });
  const leases = new ExecutionLeases(em, { owner, leaseMs: config.executionLeaseMs, executionTimeoutMs: config.executionTimeoutMs, clock });
  const nodes = new NodeRunners({ agents, integrations: new Integrations({ http, email }) });
  const runner = new ExecutionRunner({ store, waiting, leases, nodes, nodeTimeoutMs: config.nodeTimeoutMs, clock, logger: logger.child({ component: 'engine' }) });
  const worker = new ExecutionWorker({
    leases,
    runner,
    concurrency: config.executionConcurrency,
    leaseMs: config.executionLeaseMs,
    pollIntervalMs: config.executionPollIntervalMs,
    logger: logger.child({ component: 'execution-worker' }),
  });
  const versions = new WorkflowVersionsService({ em, workflows: workflowsRepository, versions: new WorkflowVersionsRepository(em), agents: agentDirectory });
  const workflows = new WorkflowsService({ em, workflows: workflowsRepository, versions });
  const executions = new ExecutionsService({
    workflows: workflowsRepository,
    executions: executionsRepository,
    store,
    worker,
    executionTimeoutMs: config.executionTimeoutMs,
    clock,
  });
  const inbound = new InboundService({ em, executions });
  const scheduler = new Scheduler({ em, executions, pollIntervalMs: config.schedulePollIntervalMs, logger: logger.child({ component: 'scheduler' }) });
  const ingress = buildIngress({ inbound, bodyLimitBytes: config.inboundBodyLimitBytes, logger: logger.child({ component: 'ingress' }) });

  const around = requestContext(orm);
  const server = new GrpcServer({ logger, around, classifyError: classifyDbError })
    .add(WORKFLOW_SERVICE_NAME, WorkflowServiceService, workflowHandlers(workflows, versions))
    .add(EXECUTION_SERVICE_NAME, ExecutionServiceService, executionHandlers(executions))
    .add(INBOUND_SERVICE_NAME, InboundServiceService, inboundHandlers(inbound));

  const relay = new OutboxRelay({
    orm,
    bus: deps.bus,
    logger: logger.child({ component: 'outbox-relay' }),
    pollIntervalMs: config.outboxPollIntervalMs,
    retry: { initialMs: 100, maxMs: config.outboxRetryMaxMs },
  });

  let started = false;
  let ingressServing = false;
  let unobserveBacklog: (() => void) | undefined;
  const ingressDrain = new HttpDrain(ingress.server, { awaitClientsClosing: true });
  return {
    inProcess: server.inProcess(),
    inProcessIngress: inProcessIngress(ingress, () => ingressServing),
    async start() {
      const port = await server.listen(config.grpcHost, config.grpcPort);
      started = true;
      await ingress.listen({ host: config.ingressHost, port: config.ingressPort });
      const address = ingress.server.address();
      const ingressPort = typeof address === 'object' && address !== null ? address.port : config.ingressPort;
      ingressServing = true;
      await relay.start();
      worker.start();
      scheduler.start();
      unobserveBacklog = observeBacklog('@agent-platform/workflow-runner', 'workflow.executions.backlog', 'Executions due to run that no runner holds.', () => leases.backlog());
      logger.info({ host: config.grpcHost, port, ingress_port: ingressPort, owner }, 'workflow-runner listening');
      return { port, ingressPort };
    },
    async stop(drain = IN_PROCESS_DRAIN) {
      unobserveBacklog?.();
      await scheduler.stop();
      ingressServing = false;
      // All at once, each within the grace: GOAWAY to gRPC callers; the ingress keeps taking hooks
      // for the drain's delay (their executions are queued for any replica) and then closes; no
      // new executions claimed while those in flight finish or reach a point another can resume.
      const ingressClosed = started ? ingressDrain.drain(drain, () => ingress.close()) : undefined;
      await Promise.all([ingressClosed, worker.stop(drain.graceMs), started ? server.stop(drain.graceMs) : undefined]);
      if (started) await relay.stop();
      started = false;
      agentMemory?.close();
      http.close();
      email.close();
      if (!(await closeOrm(orm, DB_CLOSE_TIMEOUT_MS))) logger.warn('database pool did not close in time');
    },
  };
}
