import { fileURLToPath } from 'node:url';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { spawnChildService, type TestDatabase } from '@agent-platform/kit/testing';
import { AgentServiceService, MemoryExtraction, type Agent } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { describe, expect, vi } from 'vitest';
import { startFakeOpenAI, type ChatScript, type FakeOpenAI } from './support/fake-openai.js';
import { agentMemoryTest, databaseTest, eventsOf, expectError, newTenant, startAgentMemory, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

// decisions §14: facts extracted after each turn, off the response path, once.
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

interface JobRow {
  status: string;
  attempts: number;
  last_error: string | null;
  added: number | null;
  updated: number | null;
  deleted: number | null;
}

async function jobsOf(database: TestDatabase, agentId: string): Promise<JobRow[]> {
  return database.query<JobRow>(`select "status", "attempts", "last_error", "added", "updated", "deleted" from "memory_extractions" where "agent_id" = $1 order by "created_at"`, [agentId]);
}

/** Waits (the sentinel: the queue's rows) until the agent has `count` jobs, none of them pending. */
async function settled(database: TestDatabase, agentId: string, count = 1): Promise<JobRow[]> {
  return vi.waitFor(
    async () => {
      const jobs = await jobsOf(database, agentId);
      expect(jobs).toHaveLength(count);
      expect(jobs.filter((job) => job.status === 'pending')).toEqual([]);
      return jobs;
    },
    { timeout: 15_000, interval: 50 },
  );
}

async function itemsOf(service: AgentMemoryHarness, tenant: TestTenant, agent: Agent, userId?: string) {
  const { items } = await service.memory.listMemory({ agentId: agent.id, userId, page: { page: 1, perPage: 100 } }, { principal: tenant.principal });
  return items;
}

const test = agentMemoryTest();

describe('with the offline model', () => {
  test('each sentence about the user becomes a fact; a near-identical one updates it', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const first = await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon. The weather is lovely. Is it far from Porto?', userId: 'dana' }, { principal: tenant.principal });
    expect((await settled(service.database, agent.id))[0]).toMatchObject({ status: 'done', added: 1, updated: 0, deleted: 0 });
    const [item] = await itemsOf(service, tenant, agent, 'dana');
    expect(item).toMatchObject({ content: 'I moved to Lisbon.', userId: 'dana', memoryType: 'semantic' });
    expect(JSON.parse(item!.metadataJson)).toEqual({ source: 'extraction', session_id: first.sessionId });

    await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon', sessionId: first.sessionId }, { principal: tenant.principal });
    expect((await settled(service.database, agent.id, 2))[1]).toMatchObject({ status: 'done', added: 0, updated: 1 });
    const items = await itemsOf(service, tenant, agent, 'dana');
    expect(items.map((row) => row.content)).toEqual(['I moved to Lisbon']);
    const { entries } = await service.memory.getMemoryHistory({ memoryId: item!.id }, { principal: tenant.principal });
    expect(entries.map(({ event, source, sessionId }) => ({ event, source, sessionId }))).toEqual([
      { event: 'ADD', source: 'extraction', sessionId: first.sessionId },
      { event: 'UPDATE', source: 'extraction', sessionId: first.sessionId },
    ]);
    const updates = await eventsOf(service.database, tenant.tenantId, 'memory.updated');
    expect(updates.map((event) => event.data)).toEqual([
      { agent_id: agent.id, session_id: first.sessionId, user_id: 'dana', added: 1, updated: 0, deleted: 0 },
      { agent_id: agent.id, session_id: first.sessionId, user_id: 'dana', added: 0, updated: 1, deleted: 0 },
    ]);
    // Charged like a chat round, to the tenant that chatted, once per turn.
    const charges = service.credits.charges.filter((charge) => charge.reference.startsWith('extraction-'));
    expect(charges).toHaveLength(2);
    expect(charges.every((charge) => charge.tenantId === tenant.tenantId && charge.amount >= 1)).toBe(true);
  });

  test('lists what a session taught the agent: the items its turns added or changed, no other', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Added through the API, by no session.' }, call);
    const lisbon = await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon.', userId: 'dana' }, call);
    const faro = await service.chat.chat({ agentId: agent.id, message: 'I live in Faro.', userId: 'eli' }, call);
    await settled(service.database, agent.id, 2);
    const learned = async (sessionId: string) =>
      (await service.memory.listMemory({ agentId: agent.id, sessionId, page: { page: 1, perPage: 100 } }, call)).items.map((item) => item.content);
    expect(await learned(lisbon.sessionId)).toEqual(['I moved to Lisbon.']);
    expect(await learned(faro.sessionId)).toEqual(['I live in Faro.']);
    expect(await learned('ses_00000000000000000000000000')).toEqual([]);
    const other = await service.createAgent(tenant);
    expect((await service.memory.listMemory({ agentId: other.id, sessionId: lisbon.sessionId, page: undefined }, call)).items).toEqual([]);
    const error = await expectError(service.memory.listMemory({ agentId: agent.id, sessionId: 'not-a-session', page: undefined }, call), 'validation_error');
    expect(error.details).toEqual([{ field: 'session_id', message: expect.stringContaining('session id') }]);
  });

  test('nothing is queued when the agent does not extract, and a turn with no fact changes nothing', async ({ service }) => {
    const tenant = newTenant();
    const off = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const episodic = await service.createAgent(tenant, { memoryTypes: ['episodic'] });
    for (const agent of [off, episodic]) await service.chat.chat({ agentId: agent.id, message: 'I live in Faro.' }, { principal: tenant.principal });
    expect(await jobsOf(service.database, off.id)).toEqual([]);
    expect(await jobsOf(service.database, episodic.id)).toEqual([]);

    const on = await service.createAgent(tenant);
    await service.chat.chat({ agentId: on.id, message: 'What time is it?', userId: 'dana' }, { principal: tenant.principal });
    expect((await settled(service.database, on.id))[0]).toMatchObject({ status: 'done', added: 0, updated: 0, deleted: 0 });
    expect(await itemsOf(service, tenant, on)).toEqual([]);
    expect(await eventsOf(service.database, tenant.tenantId, 'memory.updated')).toEqual([]);
  });

  test('an extraction whose charge identity answers only on a later attempt is charged, once, and marked so', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    service.credits.failCharges = 2;
    service.credits.failChargesOf = 'extraction-';
    await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon.', userId: 'dana' }, { principal: tenant.principal });
    await vi.waitFor(
      async () => {
        const rows = await service.database.query<{ charged_at: Date | null }>(`select "charged_at" from "memory_extractions" where "agent_id" = $1`, [agent.id]);
        expect(rows).toEqual([{ charged_at: expect.any(Date) }]);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(service.credits.failCharges).toBe(0);
    const extractions = service.credits.charges.filter((charge) => charge.reference.startsWith('extraction-') && charge.tenantId === tenant.tenantId);
    expect(extractions.map((charge) => charge.amount)).toEqual([1]);
  });

  test('a turn without an end user extracts nothing, unless the agent opts into shared extraction', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const perUser = await service.createAgent(tenant);
    const shared = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: 'shared' }) });
    expect([perUser.memoryExtraction, shared.memoryExtraction]).toEqual([MemoryExtraction.MEMORY_EXTRACTION_PER_USER, MemoryExtraction.MEMORY_EXTRACTION_SHARED]);
    for (const agent of [perUser, shared]) {
      await service.chat.chat({ agentId: agent.id, message: 'My order is late.' }, call);
      await service.chat.chat({ agentId: agent.id, message: 'I live in Faro.', userId: 'eli' }, call);
    }
    // The sentinel: the shared agent's two turns both done; the other agent's first turn was queued before its second.
    await settled(service.database, shared.id, 2);
    await settled(service.database, perUser.id, 1);
    const owners = async (agent: Agent) => (await itemsOf(service, tenant, agent)).map((item) => [item.content, item.userId ?? null]);
    expect(await owners(perUser)).toEqual([['I live in Faro.', 'eli']]);
    expect((await owners(shared)).sort()).toEqual([
      ['I live in Faro.', 'eli'],
      ['My order is late.', null],
    ]);
  });

  test('memory_extraction true or "shared" needs semantic memory, and takes no other value', async ({ service }) => {
    const tenant = newTenant();
    for (const [memoryTypes, setting] of [
      [['episodic'], true],
      [['episodic'], 'shared'],
      [['semantic'], 'everyone'],
      [['semantic'], 1],
    ] as const) {
      const error = await expectError(
        service.agents.createAgent({ name: 'x', type: 'assistant', memoryTypes: [...memoryTypes], tools: [], configJson: JSON.stringify({ memory_extraction: setting }) }, { principal: tenant.principal }),
        'validation_error',
      );
      expect(error.details.map((detail) => detail.field)).toEqual(['config.memory_extraction']);
    }
    const episodic = await service.createAgent(tenant, { memoryTypes: ['episodic'] });
    expect(episodic.memoryExtraction).toBe(MemoryExtraction.MEMORY_EXTRACTION_OFF);
  });
});

describe('with an OpenAI-compatible model', () => {
  const fast = { EXTRACTION_RETRY_MS: '20', EXTRACTION_MAX_ATTEMPTS: '3' };
  const answer = (content: unknown): ChatScript => ({ kind: 'answer', content: typeof content === 'string' ? content : JSON.stringify(content) });
  const facts = (...list: string[]) => answer({ facts: list });

  async function withModel(database: TestDatabase, run: (service: AgentMemoryHarness, fake: FakeOpenAI) => Promise<void>): Promise<void> {
    const fake = await startFakeOpenAI();
    const service = await startAgentMemory(database, { env: { ...fast, LLM_BASE_URL: fake.baseURL, LLM_MODEL: 'tiny' } });
    try {
      await run(service, fake);
    } finally {
      await service.stop();
      await fake.close();
    }
  }

  const extractionRequests = (fake: FakeOpenAI) =>
    fake.requests.filter((request) => typeof request.body === 'object' && request.body !== null && 'response_format' in request.body).map((request) => request.body as Record<string, unknown>);

  databaseTest('"I moved to Lisbon" then "I live in Porto now" leaves one updated item with two history entries', async ({ database }) => {
    await withModel(database, async (service, fake) => {
      const tenant = newTenant();
      const agent = await service.createAgent(tenant);
      fake.chatNext(answer('Noted.'), facts('I moved to Lisbon'), answer({ decisions: [{ event: 'ADD', id: null, text: 'Lives in Lisbon' }] }));
      const turn = await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon', userId: 'erin' }, { principal: tenant.principal });
      await settled(database, agent.id);
      fake.chatNext(answer('Nice.'), facts('I live in Porto now'), answer({ decisions: [{ event: 'UPDATE', id: '0', text: 'Lives in Porto' }] }));
      await service.chat.chat({ agentId: agent.id, message: 'I live in Porto now', sessionId: turn.sessionId }, { principal: tenant.principal });
      expect((await settled(database, agent.id, 2))[1]).toMatchObject({ status: 'done', added: 0, updated: 1, deleted: 0 });

      const items = await itemsOf(service, tenant, agent, 'erin');
      expect(items.map((item) => item.content)).toEqual(['Lives in Porto']);
      const { entries } = await service.memory.getMemoryHistory({ memoryId: items[0]!.id }, { principal: tenant.principal });
      expect(entries.map(({ event, oldContent, newContent }) => ({ event, oldContent, newContent }))).toEqual([
        { event: 'ADD', oldContent: undefined, newContent: 'Lives in Lisbon' },
        { event: 'UPDATE', oldContent: 'Lives in Lisbon', newContent: 'Lives in Porto' },
      ]);

      // The model was asked with the schema, and shown the item under a question id, never its own.
      const [factsAsked, , , decisionsAsked] = extractionRequests(fake);
      expect(factsAsked!['response_format']).toMatchObject({ type: 'json_schema', json_schema: { name: 'memory_facts', strict: true } });
      const shown = JSON.parse((decisionsAsked!['messages'] as { content: string }[]).at(-1)!.content) as { facts: { fact: string; nearest: { id: string; text: string }[] }[] };
      expect(shown.facts).toEqual([{ fact: 'I live in Porto now', nearest: [expect.objectContaining({ id: '0', text: 'Lives in Lisbon' })] }]);
    });
  });

  for (const [name, scripts, error] of [
    ['malformed JSON', [answer('Sure! Here are the facts: none, really.')], 'not JSON'],
    ['an answer off the schema', [answer({ facts: 'I have a cat' })], 'does not match'],
    ['ids it was not shown', [facts('I have a cat'), answer({ decisions: [{ event: 'DELETE', id: '7', text: '' }] })], 'was not shown'],
    ['a provider error', [{ kind: 'error', status: 500 } as ChatScript], ''],
  ] as const) {
    databaseTest(`${name} changes nothing, is retried within bounds, then left failed`, async ({ database }) => {
      await withModel(database, async (service, fake) => {
        const tenant = newTenant();
        const agent = await service.createAgent(tenant);
        const kept = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'I have a dog' }, { principal: tenant.principal });
        fake.chatNext(answer('Noted.'));
        fake.chat(scripts.length === 1 ? scripts[0] : answer('unused'));
        if (scripts.length > 1) for (let attempt = 0; attempt < 3; attempt += 1) fake.chatNext(...scripts);
        await service.chat.chat({ agentId: agent.id, message: 'I have a cat', userId: 'dana' }, { principal: tenant.principal });
        const [job] = await settled(database, agent.id);
        expect(job).toMatchObject({ status: 'failed', attempts: 3 });
        expect(job!.last_error).toContain(error);
        expect((await itemsOf(service, tenant, agent)).map((item) => [item.id, item.content])).toEqual([[kept.item!.id, 'I have a dog']]);
        expect(await eventsOf(database, tenant.tenantId, 'memory.updated')).toEqual([]);
      });
    });
  }

  databaseTest('a provider failure that clears is retried and extracts once', async ({ database }) => {
    await withModel(database, async (service, fake) => {
      const tenant = newTenant();
      const agent = await service.createAgent(tenant);
      fake.chatNext(answer('Noted.'), { kind: 'error', status: 503 }, facts('I have a cat'), answer({ decisions: [{ event: 'ADD', id: null, text: 'Has a cat' }] }));
      await service.chat.chat({ agentId: agent.id, message: 'I have a cat', userId: 'dana' }, { principal: tenant.principal });
      expect((await settled(database, agent.id))[0]).toMatchObject({ status: 'done', attempts: 2, added: 1 });
      expect((await itemsOf(service, tenant, agent)).map((item) => item.content)).toEqual(['Has a cat']);
    });
  });

  databaseTest('a crash of agent-memory between the turn and its extraction still extracts, once', { timeout: 60_000 }, async ({ database }) => {
    const fake = await startFakeOpenAI();
    // Short model time-outs make short leases: the survivor takes the job over soon after the crash.
    const env = { ...fast, LLM_BASE_URL: fake.baseURL, LLM_MODEL: 'tiny', LLM_TIMEOUT_MS: '1000' };
    const child = await spawnChildService('test/support/agent-memory-process.ts', {
      cwd: PACKAGE_DIR,
      env: { DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', TOOL_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), ...env },
    });
    const channel = new GrpcChannel(`127.0.0.1:${child.ports[0]}`, { defaultDeadlineMs: 15_000 });
    let survivor: AgentMemoryHarness | undefined;
    try {
      const tenant = newTenant();
      const { agent } = await channel
        .client(AgentServiceService)
        .createAgent({ name: 'Helper', type: 'assistant', memoryTypes: ['semantic'], tools: [] }, { principal: tenant.principal });
      // The child answers the turn, then its extraction's first question hangs: the crash comes there.
      fake.chatNext(answer('Noted.'), { kind: 'stall' });
      await channel.client(ChatServiceService).chat({ agentId: agent!.id, message: 'I have a parrot', userId: 'dana' }, { principal: tenant.principal });
      await vi.waitFor(() => expect(extractionRequests(fake)).toHaveLength(1), { timeout: 10_000, interval: 20 });
      channel.close();
      await child.kill();

      fake.chatNext(facts('I have a parrot'), answer({ decisions: [{ event: 'ADD', id: null, text: 'Has a parrot' }] }));
      survivor = await startAgentMemory(database, { env });
      expect((await settled(database, agent!.id))[0]).toMatchObject({ status: 'done', attempts: 2, added: 1 });
      expect((await itemsOf(survivor, tenant, agent!)).map((item) => item.content)).toEqual(['Has a parrot']);
      expect(await eventsOf(database, tenant.tenantId, 'memory.updated')).toHaveLength(1);
    } finally {
      channel.close();
      await child.kill();
      await survivor?.stop();
      await fake.close();
    }
  });
});
