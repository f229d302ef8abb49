import { PrincipalKind } from '@agent-platform/kit/grpc';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatTurn, newAgent, type AgentBody, type ChatReply } from '../support/agents.js';
import { lastCall, principalOf } from '../support/calls.js';
import { addMember, as, ISO_MS, matching, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';
import { connectMcp, toolOk } from '../support/mcp.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

// Every client a test opens is closed after it, whatever the test's outcome.
const clients: Client[] = [];
async function connect(credential: string, query: Record<string, string> = {}): Promise<Client> {
  const client = await connectMcp(h, credential, query);
  clients.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const TOOLS = ['list_agents', 'chat_with_agent', 'search_memory', 'add_memory', 'list_workflows', 'run_workflow'];

interface Execution {
  id: string;
  workflow_id: string;
  status: string;
  trigger: string;
  input: unknown;
  node_executions: { node_id: string; status: string }[];
}

describe('initialize and tools/list', () => {
  it('initializes statelessly and lists exactly the six tools, each with a described JSON Schema', async () => {
    const account = await newAccount(h.app);
    const client = await connect(account.token);
    expect(client.getServerVersion()).toMatchObject({ name: 'agent-platform' });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(client.getInstructions()).toContain('list_agents');

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${tool.name}.${field}`).toEqual(expect.any(String));
      }
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName['chat_with_agent']?.inputSchema.required).toEqual(['agent_id', 'message']);
    expect(byName['search_memory']?.inputSchema.required).toEqual(['agent_id', 'query']);
    expect(byName['add_memory']?.inputSchema.required).toEqual(['agent_id', 'content']);
    expect(byName['run_workflow']?.inputSchema.required).toEqual(['workflow_id', 'input']);
    expect(byName['list_agents']?.inputSchema.required).toBeUndefined();
    expect(byName['list_agents']?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName['add_memory']?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  });
});

describe('agents and chat', () => {
  it("list_agents answers the tenant's agents as GET /agents does, acting as the caller", async () => {
    const account = await newAccount(h.app);
    const first = await newAgent(h.app, account.token, { name: 'First', description: 'Answers tickets' });
    const second = await newAgent(h.app, account.token, { name: 'Second' });
    await newAgent(h.app, (await newAccount(h.app)).token, { name: 'Not ours' });
    const client = await connect(account.token);

    const listed = await toolOk<{ agents: AgentBody[]; total: number; page: number; per_page: number }>(client, 'list_agents');
    const rest = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' });
    expect(listed).toEqual(rest.json());
    expect(listed).toEqual({ agents: [second, first], total: 2, page: 1, per_page: 20 });
    expect(await toolOk(client, 'list_agents', { page: 2, per_page: 1 })).toEqual({ agents: [first], total: 2, page: 2, per_page: 1 });
    const call = lastCall(h.agentMemory, 'ListAgents');
    expect(principalOf(call)).toMatchObject({ kind: PrincipalKind.KIND_USER, tenantId: account.tenantId, userId: account.userId, role: 'owner' });
  });

  it('chat_with_agent answers the reply, continues the session, and is charged as REST chat is', async () => {
    const account = await newAccount(h.app);
    // Without extraction, whose model calls are charged too, after the reply.
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    const client = await connect(account.token);
    const balance = async () => (await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' })).json<{ balance: number }>().balance;
    const before = await balance();

    const reply = await toolOk<ChatReply>(client, 'chat_with_agent', { agent_id: agent.id, message: 'Where is my order ord_42?' });
    expect(reply).toEqual({
      id: matching(/^msg_/),
      role: 'assistant',
      content: expect.any(String),
      status: 'completed',
      tool_calls: [],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      credits: Math.max(1, Math.ceil(reply.usage.total_tokens / 1000)),
      memories: [],
      citations: [],
      session_id: matching(/^ses_/),
      run_id: matching(/^run_/),
      model: 'offline',
      created_at: matching(ISO_MS),
    });
    expect(await balance()).toBe(before - reply.credits);

    const next = await toolOk<ChatReply>(client, 'chat_with_agent', { agent_id: agent.id, message: 'And when will it arrive?', session_id: reply.session_id });
    expect(next.session_id).toBe(reply.session_id);
    // The same session as REST sees it: both turns, in order.
    const messages = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/sessions/${reply.session_id}/messages` });
    expect(messages.json<{ items: { id: string; role: string }[] }>().items.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // A REST turn continues the session the MCP turns started.
    expect((await chatTurn(h.app, account.token, agent.id, 'Thanks', reply.session_id)).session_id).toBe(reply.session_id);
    const call = lastCall(h.agentMemory, 'Chat');
    expect(call?.request).toMatchObject({ agentId: agent.id, message: 'Thanks' });
  });

  it('chat_with_agent runs a past version of the agent when given agent_version, its run saying so', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    const changed = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/agents/${agent.id}`, payload: { config: { memory_extraction: false, system_prompt: 'Answer in French.' } } });
    expect(changed.json<{ version: number }>().version).toBe(2);
    const client = await connect(account.token);

    const reply = await toolOk<ChatReply>(client, 'chat_with_agent', { agent_id: agent.id, message: 'Bonjour?', agent_version: 1 });
    const run = await as(h.app, account.token, { method: 'GET', url: `/api/v1/runs/${reply.run_id}` });
    expect(run.json()).toMatchObject({ agent_version: 1, trigger: 'mcp', status: 'completed' });
    expect(lastCall(h.agentMemory, 'Chat')?.request).toMatchObject({ agentId: agent.id, agentVersion: 1 });
  });
});

describe('memory', () => {
  it('add_memory stores an item that search_memory then finds, with the results REST search gives', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const client = await connect(account.token);

    const added = await toolOk<{ id: string }>(client, 'add_memory', { agent_id: agent.id, content: 'The customer ord_8F3K2 prefers e-mail over phone calls.', metadata: { source: 'mcp' } });
    expect(added).toEqual({
      id: matching(/^mem_/),
      agent_id: agent.id,
      // The default: a fact.
      memory_type: 'semantic',
      content: 'The customer ord_8F3K2 prefers e-mail over phone calls.',
      metadata: { source: 'mcp' },
      user_id: null,
      created_at: matching(ISO_MS),
      updated_at: null,
    });
    await toolOk(client, 'add_memory', { agent_id: agent.id, content: 'Orders ship from Rotterdam.', memory_type: 'episodic' });

    const found = await toolOk<{ results: { id: string; score: number }[] }>(client, 'search_memory', { agent_id: agent.id, query: 'how does ord_8F3K2 like to be contacted', top_k: 1 });
    expect(found.results).toHaveLength(1);
    expect(found.results[0]).toMatchObject({ id: added.id, metadata: { source: 'mcp' }, memory_type: 'semantic' });
    const rest = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', payload: { agent_id: agent.id, query: 'how does ord_8F3K2 like to be contacted', top_k: 1 } });
    expect(found).toEqual(rest.json());
    // Without top_k, the service's default (5) and both items.
    expect((await toolOk<{ results: unknown[] }>(client, 'search_memory', { agent_id: agent.id, query: 'orders' })).results).toHaveLength(2);
  });
});

describe('workflows', () => {
  it('list_workflows lists them; run_workflow runs one with its input and answers the finished execution', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/workflows',
      payload: {
        name: 'Route orders',
        nodes: [
          { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'big' }, { else: 'small' }] } },
          { id: 'big', type: 'condition', config: { rules: [] } },
          { id: 'small', type: 'condition', config: { rules: [] } },
        ],
        edges: [],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const workflow = created.json<{ id: string }>();
    const client = await connect(account.token);

    const listed = await toolOk<{ items: { id: string }[]; total: number }>(client, 'list_workflows');
    expect(listed).toEqual((await as(h.app, account.token, { method: 'GET', url: '/api/v1/workflows' })).json());
    expect(listed.items.map((item) => item.id)).toEqual([workflow.id]);

    const execution = await toolOk<Execution>(client, 'run_workflow', { workflow_id: workflow.id, input: { amount: 250 } });
    expect(execution).toMatchObject({ id: matching(/^exe_/), workflow_id: workflow.id, status: 'completed', trigger: 'manual', input: { amount: 250 } });
    expect(Object.fromEntries(execution.node_executions.map((node) => [node.node_id, node.status]))).toEqual({ check: 'completed', big: 'completed', small: 'skipped' });
    const stored = await as(h.app, account.token, { method: 'GET', url: `/api/v1/workflows/${workflow.id}/executions/${execution.id}` });
    expect(stored.json()).toEqual(execution);
    expect(lastCall(h.workflowRunner, 'ExecuteWorkflow')?.request).toMatchObject({ workflowId: workflow.id, wait: true });
  });
});

describe('credentials and tenants', () => {
  it('acts in the tenant named by tenant_id, and an API key in its own, holding its scopes', async () => {
    const owner = await newAccount(h.app);
    const member = await newAccount(h.app);
    await addMember(h.app, owner, member, 'member');
    const agent = await newAgent(h.app, owner.token, { name: 'Shared' });

    const inOwners = await connect(member.token, { tenant_id: owner.tenantId });
    expect((await toolOk<{ agents: AgentBody[] }>(inOwners, 'list_agents')).agents.map((listed) => listed.id)).toEqual([agent.id]);
    expect(principalOf(lastCall(h.agentMemory, 'ListAgents'))).toMatchObject({ tenantId: owner.tenantId, userId: member.userId, role: 'member' });
    // Without it, the member's own first tenant, where there is no agent.
    expect((await toolOk<{ total: number }>(await connect(member.token), 'list_agents')).total).toBe(0);

    const key = await newApiKey(h.app, owner, ['agents:read', 'memory:write', 'memory:read']);
    const asKey = await connect(key.key);
    expect((await toolOk<{ total: number }>(asKey, 'list_agents')).total).toBe(1);
    expect(principalOf(lastCall(h.agentMemory, 'ListAgents'))).toMatchObject({ kind: PrincipalKind.KIND_API_KEY, tenantId: owner.tenantId });
    await toolOk(asKey, 'add_memory', { agent_id: agent.id, content: 'Added with a key.' });
  });
});
