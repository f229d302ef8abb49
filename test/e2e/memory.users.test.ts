import type { AgentPlatformClient, MemoryItem } from '@agent-platform/client';
import { describe, expect, it, vi } from 'vitest';
import { Api, ISO_MS, newAccount } from './harness/client.js';
import { expectStatus, statusOf } from './harness/results.js';
import { createWorkflow, runSync } from './harness/workflows.js';

// decisions §14 in each deployment mode: end users kept apart, facts extracted after the turn and
// updated by a later one, history, and forgetting an end user.

async function chat(client: AgentPlatformClient, agentId: string, body: { message: string; user_id?: string; session_id?: string }) {
  return expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body }));
}

async function itemsOf(client: AgentPlatformClient, agentId: string, userId: string): Promise<MemoryItem[]> {
  return expectStatus(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, user_id: userId } } })).items;
}

async function historyOf(client: AgentPlatformClient, memoryId: string) {
  return expectStatus(await client.GET('/api/v1/memory/{memory_id}/history', { params: { path: { memory_id: memoryId } } })).history;
}

describe('memory that manages itself', () => {
  it('keeps two end users of one agent apart, updates a fact from a later turn, and forgets a user at once', async () => {
    const { client } = await newAccount(new Api());
    const agentId = expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Concierge', type: 'assistant' } }), 201).id;
    const ana = await chat(client, agentId, { message: 'I moved to Lisbon.', user_id: 'ana' });
    await chat(client, agentId, { message: 'I moved to Porto.', user_id: 'ben' });

    // Extraction runs after the reply: the sentinel is each fact appearing.
    const [anaFact] = await vi.waitFor(
      async () => {
        const items = await itemsOf(client, agentId, 'ana');
        expect(items.map((item) => item.content)).toEqual(['I moved to Lisbon.']);
        return items;
      },
      { timeout: 15_000, interval: 100 },
    );
    await vi.waitFor(async () => expect((await itemsOf(client, agentId, 'ben')).map((item) => item.content)).toEqual(['I moved to Porto.']), { timeout: 15_000, interval: 100 });
    expect(anaFact).toMatchObject({ user_id: 'ana', memory_type: 'semantic', metadata: { source: 'extraction', session_id: ana.session_id } });
    // What Ana's session taught the agent, and only that.
    const learned = expectStatus(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, session_id: ana.session_id } } }));
    expect(learned.items.map((item) => item.content)).toEqual(['I moved to Lisbon.']);

    // Ben's turn and searches never reach Ana's fact; hers do.
    // A question: no fact of its own for Ben.
    const benTurn = await chat(client, agentId, { message: 'Where did people move to, Lisbon or Porto?', user_id: 'ben' });
    expect(benTurn.content).toContain('I moved to Porto.');
    expect(benTurn.content).not.toContain('I moved to Lisbon.');
    const search = async (userId: string) =>
      expectStatus(await client.POST('/api/v1/memory/search', { body: { agent_id: agentId, query: 'moved to Lisbon', top_k: 10, user_id: userId } })).results.map((result) => result.content);
    expect(await search('ben')).not.toContain('I moved to Lisbon.');
    expect(await search('ana')).toContain('I moved to Lisbon.');

    // A later turn saying it again updates the item; its history keeps both.
    await chat(client, agentId, { message: 'I moved to Lisbon', session_id: ana.session_id });
    const history = await vi.waitFor(
      async () => {
        const entries = await historyOf(client, anaFact!.id);
        expect(entries).toHaveLength(2);
        return entries;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(history).toEqual([
      { event: 'ADD', old_content: null, new_content: 'I moved to Lisbon.', source: 'extraction', session_id: ana.session_id, created_at: expect.stringMatching(ISO_MS) },
      { event: 'UPDATE', old_content: 'I moved to Lisbon.', new_content: 'I moved to Lisbon', source: 'extraction', session_id: ana.session_id, created_at: expect.stringMatching(ISO_MS) },
    ]);

    // Forgetting Ana: one call; her items leave search at once, Ben's stay; her item's history stays readable.
    expect(expectStatus(await client.DELETE('/api/v1/memory', { params: { query: { agent_id: agentId, user_id: 'ana' } } }))).toEqual({ deleted: 1 });
    expect(await search('ana')).toEqual([]);
    expect(await itemsOf(client, agentId, 'ben')).toHaveLength(1);
    expect((await historyOf(client, anaFact!.id)).map((entry) => entry.event)).toEqual(['ADD', 'UPDATE', 'DELETE']);
  });

  it("a workflow's agent node handles each customer's message as theirs, and a turn of nobody's teaches nothing", async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
    const agent = expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support', type: 'support' } }), 201);
    expect(agent.memory_extraction).toBe('per_user');
    const perCustomer = await createWorkflow(api, account, {
      name: 'Reply per customer',
      nodes: [{ id: 'reply', type: 'agent', config: { agent_id: agent.id, message: '{{ input.text }}', user_id: '{{ input.customer }}' } }],
      edges: [],
    });
    const unnamed = await createWorkflow(api, account, { name: 'Reply', nodes: [{ id: 'reply', type: 'agent', config: { agent_id: agent.id, message: '{{ input.text }}' } }], edges: [] });
    const reply = async (workflowId: string, input: Record<string, string>) => {
      const run = await runSync(api, account, workflowId, input);
      expect(run.status, JSON.stringify(run.error)).toBe('completed');
      return run.output as { content: string; session_id: string };
    };

    // First the turn of nobody's: had it been extracted, its fact would be shared with every customer.
    await reply(unnamed.id, { text: 'My order A-17 is late.' });
    const ana = await reply(perCustomer.id, { customer: 'ana', text: 'I live in Lisbon.' });
    await reply(perCustomer.id, { customer: 'ben', text: 'I live in Porto.' });
    const sessions = expectStatus(await client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agent.id } } })).items;
    expect(sessions.find((session) => session.id === ana.session_id)?.user_id).toBe('ana');
    // The sentinel: both customers' facts extracted, after the unnamed turn's (which ran first) would have been.
    for (const [customer, fact] of [['ana', 'I live in Lisbon.'], ['ben', 'I live in Porto.']] as const) {
      await vi.waitFor(async () => expect((await itemsOf(client, agent.id, customer)).map((item) => item.content)).toEqual([fact]), { timeout: 15_000, interval: 100 });
    }
    const everything = expectStatus(await client.GET('/api/v1/memory', { params: { query: { agent_id: agent.id } } })).items;
    expect(everything.map((item) => [item.content, item.user_id]).sort()).toEqual([
      ['I live in Lisbon.', 'ana'],
      ['I live in Porto.', 'ben'],
    ]);
    // Each customer's turn quotes their own fact (the offline model quotes what it retrieved), never the other's.
    const question = 'Do I live in Lisbon or in Porto?';
    const toAna = await reply(perCustomer.id, { customer: 'ana', text: question });
    const toBen = await reply(perCustomer.id, { customer: 'ben', text: question });
    expect(toAna.content).toContain('I live in Lisbon.');
    expect(toAna.content).not.toContain('I live in Porto.');
    expect(toBen.content).toContain('I live in Porto.');
    expect(toBen.content).not.toContain('I live in Lisbon.');
    // A template that names nobody fails the node, rather than chatting as nobody's turn.
    for (const input of [{ text: 'I live in Faro.' }, { text: 'I live in Faro.', customer: ' ' }]) {
      const nobody = await runSync(api, account, perCustomer.id, input);
      expect(nobody.status).toBe('failed');
      expect(nobody.error).toEqual({ node_id: 'reply', message: expect.stringMatching(/^user_id: /) });
    }
  });

  it('edits an item by hand, recorded in its history; another tenant learns nothing of it', async () => {
    const { client } = await newAccount(new Api());
    const { client: stranger } = await newAccount(new Api());
    const agentId = expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Notes', type: 'assistant' } }), 201).id;
    const item = expectStatus(await client.POST('/api/v1/memory', { body: { agent_id: agentId, memory_type: 'semantic', content: 'Prefers tea.', user_id: 'ana' } }), 201);
    const path = { params: { path: { memory_id: item.id } } };
    const patched = expectStatus(await client.PATCH('/api/v1/memory/{memory_id}', { ...path, body: { content: 'Prefers green tea.' } }));
    expect(patched).toEqual({ ...item, content: 'Prefers green tea.', updated_at: expect.stringMatching(ISO_MS) });
    expect((await historyOf(client, item.id)).map((entry) => [entry.event, entry.source, entry.new_content])).toEqual([
      ['ADD', 'api', 'Prefers tea.'],
      ['UPDATE', 'api', 'Prefers green tea.'],
    ]);
    expect(await statusOf(stranger.GET('/api/v1/memory/{memory_id}/history', path))).toBe(404);
    expect(await statusOf(stranger.PATCH('/api/v1/memory/{memory_id}', { ...path, body: { content: 'x' } }))).toBe(404);
    expect(await statusOf(stranger.DELETE('/api/v1/memory', { params: { query: { agent_id: agentId } } }))).toBe(404);
  });
});
