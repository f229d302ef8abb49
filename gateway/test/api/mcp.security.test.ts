import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { addMember, ANY_NUMBER, as, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';
import { connectMcp, mcpUrl, postMcp, toolError, toolOk } from '../support/mcp.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const clients: Client[] = [];
async function connect(credential: string, query: Record<string, string> = {}): Promise<Client> {
  const client = await connectMcp(h, credential, query);
  clients.push(client);
  return client;
}
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };

async function newWorkflow(token: string): Promise<{ id: string }> {
  const created = await as(h.app, token, { method: 'POST', url: '/api/v1/workflows', payload: { name: 'Empty', nodes: [], edges: [] } });
  if (created.statusCode !== 201) throw new Error(`workflow: ${created.statusCode} ${created.body}`);
  return created.json<{ id: string }>();
}

describe('authentication', () => {
  it('answers 401 in the flat error format without a credential or with an invalid one, on every method', async () => {
    for (const credential of [undefined, 'garbage', 'ap_live_00000000000000000000000000000000']) {
      const refused = await postMcp(h, credential, INITIALIZE);
      expect(refused.status, credential).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm="agent-platform"/);
      expect(await refused.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
    }
    for (const method of ['GET', 'DELETE']) expect((await fetch(mcpUrl(h), { method })).status, method).toBe(401);
  });

  it("refuses the SDK's client before it initializes", async () => {
    const failure = await connectMcp(h, 'garbage').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StreamableHTTPError);
    expect((failure as StreamableHTTPError).code).toBe(401);
  });

  it('answers 403 for a tenant_id the caller is not a member of', async () => {
    const caller = await newAccount(h.app);
    const stranger = await newAccount(h.app);
    const refused = await fetch(mcpUrl(h, { tenant_id: stranger.tenantId }), {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(INITIALIZE),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden' });
  });
});

describe('roles and scopes, per tool as on its REST route', () => {
  it('a viewer lists and searches, but chat_with_agent, add_memory and run_workflow are forbidden tool errors', async () => {
    const owner = await newAccount(h.app);
    const viewer = await newAccount(h.app);
    await addMember(h.app, owner, viewer, 'viewer');
    const agent = await newAgent(h.app, owner.token);
    const workflow = await newWorkflow(owner.token);
    const client = await connect(viewer.token, { tenant_id: owner.tenantId });

    expect((await toolOk<{ total: number }>(client, 'list_agents')).total).toBe(1);
    expect((await toolOk<{ total: number }>(client, 'list_workflows')).total).toBe(1);
    await toolOk(client, 'search_memory', { agent_id: agent.id, query: 'anything' });
    const chats = h.agentMemory.callsOf('Chat').length;
    const adds = h.agentMemory.callsOf('AddMemory').length;
    expect((await toolError(client, 'chat_with_agent', { agent_id: agent.id, message: 'Hi' }, 'forbidden')).message).toContain('member');
    await toolError(client, 'add_memory', { agent_id: agent.id, content: 'x' }, 'forbidden');
    await toolError(client, 'run_workflow', { workflow_id: workflow.id, input: {} }, 'forbidden');
    // Authorised before the arguments are read, as REST authorises before it validates a body.
    await toolError(client, 'chat_with_agent', {}, 'forbidden');
    expect(h.agentMemory.callsOf('Chat')).toHaveLength(chats);
    expect(h.agentMemory.callsOf('AddMemory')).toHaveLength(adds);
  });

  it("an API key may use the tools its scopes allow; the others are forbidden tool errors naming the scope", async () => {
    const owner = await newAccount(h.app);
    const agent = await newAgent(h.app, owner.token);
    const workflow = await newWorkflow(owner.token);
    const key = await newApiKey(h.app, owner, ['agents:read']);
    const client = await connect(key.key);

    expect((await toolOk<{ total: number }>(client, 'list_agents')).total).toBe(1);
    expect((await toolError(client, 'chat_with_agent', { agent_id: agent.id, message: 'Hi' }, 'forbidden')).message).toContain('agents:write');
    expect((await toolError(client, 'add_memory', { agent_id: agent.id, content: 'x' }, 'forbidden')).message).toContain('memory:write');
    expect((await toolError(client, 'search_memory', { agent_id: agent.id, query: 'q' }, 'forbidden')).message).toContain('memory:read');
    expect((await toolError(client, 'list_workflows', {}, 'forbidden')).message).toContain('workflows:read');
    expect((await toolError(client, 'run_workflow', { workflow_id: workflow.id, input: {} }, 'forbidden')).message).toContain('workflows:execute');

    const writer = await connect((await newApiKey(h.app, owner, ['agents:write', 'workflows:execute'])).key);
    await toolOk(writer, 'chat_with_agent', { agent_id: agent.id, message: 'Hi' });
    await toolOk(writer, 'run_workflow', { workflow_id: workflow.id, input: {} });
  });
});

describe('tools/list', () => {
  const listed = async (credential: string, query: Record<string, string> = {}) => (await (await connect(credential, query)).listTools()).tools.map((tool) => tool.name);

  it('offers an API key only the tools its scopes allow', async () => {
    const owner = await newAccount(h.app);
    const keyFor = async (scopes: string[]) => (await newApiKey(h.app, owner, scopes)).key;
    expect(await listed(await keyFor(['agents:read']))).toEqual(['list_agents']);
    expect(await listed(await keyFor(['memory:read', 'workflows:read']))).toEqual(['search_memory', 'list_workflows']);
    expect(await listed(await keyFor(['agents:write', 'memory:write', 'workflows:execute']))).toEqual(['chat_with_agent', 'add_memory', 'run_workflow']);
    expect(await listed(await keyFor(['*']))).toEqual(['list_agents', 'chat_with_agent', 'search_memory', 'add_memory', 'list_workflows', 'run_workflow']);
  });

  it('offers a person what their role in the tenant allows', async () => {
    const owner = await newAccount(h.app);
    const viewer = await newAccount(h.app);
    await addMember(h.app, owner, viewer, 'viewer');
    expect(await listed(viewer.token, { tenant_id: owner.tenantId })).toEqual(['list_agents', 'search_memory', 'list_workflows']);
    expect(await listed(owner.token)).toHaveLength(6);
  });
});

// Limits of their own (free: 4 a minute), on a platform of their own so no other test's requests count.
describe('the rate limit of the plan', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness({ RATE_LIMITS: 'free:4/1000,pro:600/50000,enterprise:0/0' });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('counts each POST as one request of the tenant, shared with REST, then answers 429 with the usual headers', async () => {
    const account = await newAccount(limited.app);
    const windowStart = limited.clock.advanceToNextWindow(60);
    const reset = String(Math.floor(windowStart / 1000) + 60);

    const initialized = await postMcp(limited, account.token, INITIALIZE);
    expect(initialized.status).toBe(200);
    expect(initialized.headers.get('x-ratelimit-limit')).toBe('4');
    expect(initialized.headers.get('x-ratelimit-remaining')).toBe('3');
    expect(initialized.headers.get('x-ratelimit-reset')).toBe(reset);
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_agents', arguments: {} } };
    // A tool error is a request like any other.
    const forbidden = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'chat_with_agent', arguments: {} } };
    expect((await postMcp(limited, account.token, call)).headers.get('x-ratelimit-remaining')).toBe('2');
    expect((await postMcp(limited, account.token, forbidden)).headers.get('x-ratelimit-remaining')).toBe('1');
    // REST draws on the same budget.
    expect((await as(limited.app, account.token, { method: 'GET', url: '/api/v1/agents' })).headers['x-ratelimit-remaining']).toBe('0');

    const listed = limited.agentMemory.callsOf('ListAgents').length;
    const refused = await postMcp(limited, account.token, call);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String), retry_after: ANY_NUMBER });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(reset);
    expect(limited.agentMemory.callsOf('ListAgents')).toHaveLength(listed);

    // The next window serves it again.
    limited.clock.advanceToNextWindow(60);
    expect((await postMcp(limited, account.token, call)).status).toBe(200);
  });
});
