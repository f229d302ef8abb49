import { randomBytes } from 'node:crypto';
import { createLogger, DomainError, newId, type Actor, type Clock } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { GrpcChannel, PrincipalKind, type ChannelTransport, type Principal, type PromiseClient } from '@agent-platform/kit/grpc';
import type { HostResolver } from '@agent-platform/kit/security';
import { databaseFixture, type TestDatabase, type TestDatabaseOptions } from '@agent-platform/kit/testing';
import { AgentServiceService, type Agent } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { DatasetServiceService } from '@agent-platform/proto/agents/v1/datasets';
import { EvalServiceService } from '@agent-platform/proto/agents/v1/evals';
import { DocumentServiceService } from '@agent-platform/proto/agents/v1/documents';
import { MemoryServiceService } from '@agent-platform/proto/agents/v1/memory';
import { RunServiceService } from '@agent-platform/proto/agents/v1/runs';
import { ToolServiceService } from '@agent-platform/proto/agents/v1/tools';
import { test as base } from 'vitest';
import type { AgentsService } from '../../src/agents/agents.service.js';
import { noCreditsLeft, type Credits } from '../../src/chat/credits.js';
import { migrations, openDatabase } from '../../src/database.js';
import type { ChatModel } from '../../src/models/chat-model.js';
import type { Embedder } from '../../src/models/embedder.js';
import type { Principals } from '../../src/tools/principals.js';
import type { ToolRunner } from '../../src/tools/tool-runner.js';
import type { VectorStore } from '../../src/vectors/vector-store.js';
import { buildAgentMemoryService, loadAgentMemoryConfig } from '../../src/service.js';

// TEST_LOG_LEVEL=debug shows the service's logs while a test is investigated.
export const logger = createLogger({ service: 'agent-memory-test', level: process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent' });
export { expectError } from '@agent-platform/kit/testing';

/** What a tenant has before any charge: identity's welcome grant (WELCOME_CREDITS' default). */
const WELCOME_CREDITS = 1_000;

/** One charge taken: `amount` is what it took, which the balance may have cut short. */
export interface TakenCharge {
  tenantId: string;
  reference: string;
  amount: number;
}

/**
 * The credit ledger as agent-memory sees it through identity's BillingService: a balance per
 * tenant, charges taken up to the balance, once per tenant and reference, and refused where
 * identity refuses them. credits.contract.test.ts holds it to IdentityCredits over the real
 * identity. Unlike identity, it takes any tenant id for a registered one.
 */
export class TestCredits implements Credits {
  readonly balances = new Map<string, number>();
  /** Every charge taken, in order. */
  readonly charges: TakenCharge[] = [];
  /** Fails this many charge calls before answering (identity unreachable)… */
  failCharges = 0;
  /** …of those whose reference starts so. */
  failChargesOf = '';

  balanceOf(tenantId: string): number {
    return this.balances.get(tenantId) ?? WELCOME_CREDITS;
  }

  /** What the tenant's charge for `reference` took; undefined when there was none. */
  chargeOf(tenantId: string, reference: string): number | undefined {
    return this.charges.find((taken) => taken.tenantId === tenantId && taken.reference === reference)?.amount;
  }

  ensureAvailable(actor: Actor): Promise<void> {
    if (this.balanceOf(actor.tenantId) < 1) return Promise.reject(noCreditsLeft());
    return Promise.resolve();
  }

  charge(actor: Actor, charge: { amount: number; reference: string; description: string }): Promise<void> {
    if (this.failCharges > 0 && charge.reference.startsWith(this.failChargesOf)) {
      this.failCharges -= 1;
      return Promise.reject(new DomainError('service_unavailable', 'identity is away'));
    }
    const refused = refusedDebit(charge);
    if (refused) return Promise.reject(refused);
    if (this.chargeOf(actor.tenantId, charge.reference) === undefined) {
      const amount = Math.min(charge.amount, this.balanceOf(actor.tenantId));
      this.balances.set(actor.tenantId, this.balanceOf(actor.tenantId) - amount);
      this.charges.push({ tenantId: actor.tenantId, reference: charge.reference, amount });
    }
    return Promise.resolve();
  }
}

/** What identity's DebitCredits refuses as validation_error: not a positive amount, no reference, or an over-long reference or description. */
function refusedDebit({ amount, reference, description }: { amount: number; reference: string; description: string }): DomainError | undefined {
  const fine = Number.isSafeInteger(amount) && amount >= 1 && reference.trim() !== '' && reference.length <= 200 && description.length <= 500;
  return fine ? undefined : DomainError.validation([{ field: 'charge', message: 'is not a debit identity takes' }]);
}

/**
 * Whether a turn's credential still holds, as identity answers it: everything holds but the keys
 * a test revokes. identity's own tests hold ConfirmApiKey to its rules; the gateway and e2e suites
 * run tool calls against the real one.
 */
export class TestPrincipals implements Principals {
  readonly revoked = new Set<string>();

  confirm(actor: Actor): Promise<Actor> {
    if (actor.apiKeyId !== undefined && this.revoked.has(actor.apiKeyId)) return Promise.reject(new DomainError('unauthorized', 'The API key is invalid, expired or revoked.'));
    return Promise.resolve(actor);
  }
}

export interface TestTenant {
  tenantId: string;
  /** A member of the tenant, as the gateway would forward them. */
  principal: Principal;
}

export function newTenant(role = 'member'): TestTenant {
  const tenantId = newId('tenant');
  return { tenantId, principal: principalOf(tenantId, role) };
}

/** The tenant's member as the service's own code takes them, for what is called without an RPC. */
export function actorOf(tenant: TestTenant, overrides: Partial<Actor> = {}): Actor {
  return { kind: 'user', userId: tenant.principal.userId, tenantId: tenant.tenantId, role: 'member', scopes: [], ...overrides };
}

export function principalOf(tenantId: string, role = 'member', kind = PrincipalKind.KIND_USER, scopes: string[] = []): Principal {
  return { kind, userId: newId('user'), apiKeyId: kind === PrincipalKind.KIND_API_KEY ? newId('apiKey') : '', tenantId, role, scopes };
}

export interface AgentMemoryHarness {
  database: TestDatabase;
  agents: PromiseClient<typeof AgentServiceService>;
  chat: PromiseClient<typeof ChatServiceService>;
  memory: PromiseClient<typeof MemoryServiceService>;
  documents: PromiseClient<typeof DocumentServiceService>;
  tools: PromiseClient<typeof ToolServiceService>;
  runs: PromiseClient<typeof RunServiceService>;
  datasets: PromiseClient<typeof DatasetServiceService>;
  evals: PromiseClient<typeof EvalServiceService>;
  credits: TestCredits;
  principals: TestPrincipals;
  /** The service's own tool runner, wired from its configuration. */
  toolRunner: ToolRunner;
  /** The service's own agents, for what no RPC reaches (an agent at a past version). */
  agentsService: AgentsService;
  /** A new agent of the tenant. */
  createAgent(tenant: TestTenant, overrides?: { memoryTypes?: string[]; configJson?: string; name?: string }): Promise<Agent>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  model?: ChatModel;
  embedder?: Embedder;
  /** The vector store, when a test inspects it (default: chosen from the configuration). */
  vectors?: VectorStore;
  /** Kept by the caller: files of the embedded index (default: in memory). */
  vectorIndexDir?: string;
  /** workflow-runner, asked for at the first workflow check (default: WORKFLOW_RUNNER_ADDR). */
  workflowRunner?: () => ChannelTransport | string;
  /** Name resolution of the outbound address policy. */
  resolveHost?: HostResolver;
  /** What chat turns read the time from and wait on (default: the system's). */
  clock?: Clock;
}

/** The key that seals tools' header values in the harness's service (base64 of 32 bytes). */
export const TEST_TOOL_SECRET_KEY = randomBytes(32).toString('base64');

export async function startAgentMemory(database: TestDatabase, options: HarnessOptions = {}): Promise<AgentMemoryHarness> {
  const config = loadAgentMemoryConfig({
    DATABASE_URL: database.url,
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    TOOL_SECRET_KEY: TEST_TOOL_SECRET_KEY,
    ...(options.vectorIndexDir ? { VECTOR_INDEX_DIR: options.vectorIndexDir } : {}),
    ...options.env,
  });
  const credits = new TestCredits();
  const principals = new TestPrincipals();
  const bus = new InProcessEventBus({ consumers: [], logger });
  const service = await buildAgentMemoryService(config, {
    logger,
    bus,
    credits,
    principals,
    ...(options.model ? { model: options.model } : {}),
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.vectors ? { vectors: options.vectors } : {}),
    ...(options.workflowRunner ? { workflowRunnerTransport: options.workflowRunner } : {}),
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const { port } = await service.start();
  const channel = new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 20_000 });
  const agents = channel.client(AgentServiceService);
  return {
    database,
    agents,
    chat: channel.client(ChatServiceService),
    memory: channel.client(MemoryServiceService),
    documents: channel.client(DocumentServiceService),
    tools: channel.client(ToolServiceService),
    runs: channel.client(RunServiceService),
    datasets: channel.client(DatasetServiceService),
    evals: channel.client(EvalServiceService),
    credits,
    principals,
    toolRunner: service.toolRunner,
    agentsService: service.agents,
    async createAgent(tenant, overrides = {}) {
      const { agent } = await agents.createAgent(
        { name: overrides.name ?? 'Helper', type: 'assistant', memoryTypes: overrides.memoryTypes ?? ['semantic', 'episodic'], tools: [], configJson: overrides.configJson },
        { principal: tenant.principal },
      );
      return agent!;
    },
    async stop() {
      channel.close();
      await service.stop();
      await bus.close();
    },
  };
}

/** agent-memory's databases, each cloned from the migrated template. */
export const AGENTS_DATABASE: TestDatabaseOptions = {
  name: 'agents',
  migrations,
  migrate: async (url) => {
    const orm = await openDatabase(url, logger);
    await orm.close();
  },
};

/** `test` with a file-scoped `database` cloned from the migrated template. */
export const databaseTest = base.extend('database', { scope: 'file' }, databaseFixture(AGENTS_DATABASE));

/**
 * `test` with a `database` of the test's own: for a test that starts a service of its own and
 * queues background work, which the file's `service`, on the file's database, would claim too.
 */
export const ownDatabaseTest = base.extend('database', { scope: 'test' }, databaseFixture(AGENTS_DATABASE));

/** `databaseTest` plus a file-scoped `service`: the real agent-memory on 127.0.0.1:0. */
export function agentMemoryTest(options: HarnessOptions = {}) {
  return databaseTest.extend('service', { scope: 'file' }, async ({ database }, { onCleanup }): Promise<AgentMemoryHarness> => {
    const harness = await startAgentMemory(database, options);
    onCleanup(() => harness.stop());
    return harness;
  });
}

/** The outbox rows of one tenant and type, oldest first. */
export async function eventsOf(database: TestDatabase, tenantId: string, type: string): Promise<{ data: Record<string, unknown> }[]> {
  const rows = await database.query<{ payload: { data: Record<string, unknown> } }>(
    `select payload from outbox where payload->>'tenant_id' = $1 and payload->>'type' = $2 order by created_at, id`,
    [tenantId, type],
  );
  return rows.map((row) => ({ data: row.payload.data }));
}
