import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { as, newAccount, startHarness, type Harness } from '../support/harness.js';
import { callTool, connectMcp, mcpUrl, postMcp, toolError } from '../support/mcp.js';

let h: Harness;
beforeAll(async () => {
  // No welcome credits: a chat turn is refused for want of them, as on REST.
  h = await startHarness({ WELCOME_CREDITS: '0' });
});
afterAll(async () => {
  await h.close();
});

const clients: Client[] = [];
async function connect(credential: string): Promise<Client> {
  const client = await connectMcp(h, credential);
  clients.push(client);
  return client;
}
afterEach(async () => {
  h.agentMemory.heal();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function newWorkflow(token: string): Promise<{ id: string }> {
  const created = await as(h.app, token, { method: 'POST', url: '/api/v1/workflows', payload: { name: 'Empty', nodes: [], edges: [] } });
  if (created.statusCode !== 201) throw new Error(`workflow: ${created.statusCode} ${created.body}`);
  return created.json<{ id: string }>();
}

describe('arguments', () => {
  it('are validation_error tool errors naming every field at fault, before any upstream call', async () => {
    const account = await newAccount(h.app);
    const client = await connect(account.token);
    const chats = h.agentMemory.callsOf('Chat').length;
    await toolError(client, 'chat_with_agent', {}, 'validation_error', ['agent_id', 'message']);
    await toolError(client, 'chat_with_agent', { agent_id: 'agt_x', message: '' }, 'validation_error', ['message']);
    expect(h.agentMemory.callsOf('Chat')).toHaveLength(chats);
    await toolError(client, 'search_memory', { agent_id: 'agt_x', query: 'q', top_k: 0 }, 'validation_error', ['top_k']);
    await toolError(client, 'search_memory', { agent_id: 42, query: 'q', top_k: 2.5 }, 'validation_error', ['agent_id', 'top_k']);
    await toolError(client, 'add_memory', { agent_id: 'agt_x', content: 'x', metadata: 'not an object' }, 'validation_error', ['metadata']);
    await toolError(client, 'run_workflow', { workflow_id: 'wf_x' }, 'validation_error', ['input']);
    await toolError(client, 'list_agents', { per_page: 101 }, 'validation_error', ['per_page']);
  });

  it("are checked by the services as REST's are: a memory_type the agent does not keep", async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { memory_types: ['episodic'] });
    const client = await connect(account.token);
    // The default (semantic) is not one of this agent's types either.
    await toolError(client, 'add_memory', { agent_id: agent.id, content: 'A fact.' }, 'validation_error', ['memory_type']);
    await toolError(client, 'add_memory', { agent_id: agent.id, content: 'A fact.', memory_type: 'procedural' }, 'validation_error', ['memory_type']);
    await toolError(client, 'add_memory', { agent_id: agent.id, content: '   ', memory_type: 'episodic' }, 'validation_error', ['content']);
  });
});

describe('another tenant', () => {
  it("'s agent or workflow is a not_found tool error, as on REST, for every tool that names one", async () => {
    const owner = await newAccount(h.app);
    const agent = await newAgent(h.app, owner.token);
    const workflow = await newWorkflow(owner.token);
    const stranger = await connect((await newAccount(h.app)).token);
    await toolError(stranger, 'chat_with_agent', { agent_id: agent.id, message: 'Hello' }, 'not_found');
    await toolError(stranger, 'search_memory', { agent_id: agent.id, query: 'anything' }, 'not_found');
    await toolError(stranger, 'add_memory', { agent_id: agent.id, content: 'Planted.' }, 'not_found');
    await toolError(stranger, 'run_workflow', { workflow_id: workflow.id, input: {} }, 'not_found');
    // Nothing was planted: the owner's agent has no memory.
    const listed = await as(h.app, owner.token, { method: 'GET', url: '/api/v1/memory', query: { agent_id: agent.id } });
    expect(listed.json<{ total: number }>().total).toBe(0);
  });
});

describe('failures', () => {
  it("a chat without credits is an insufficient_credits tool error with REST's message, and nothing is stored", async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const rest = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'Hello' } });
    expect(rest.statusCode).toBe(402);
    const failed = await toolError(await connect(account.token), 'chat_with_agent', { agent_id: agent.id, message: 'Hello' }, 'insufficient_credits');
    expect(failed.message).toBe(rest.json<{ message: string }>().message);
    const sessions = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/sessions` });
    expect(sessions.json<{ total: number }>().total).toBe(0);
  });

  it('a paused workflow is a conflict tool error', async () => {
    const account = await newAccount(h.app);
    const workflow = await newWorkflow(account.token);
    expect((await as(h.app, account.token, { method: 'POST', url: `/api/v1/workflows/${workflow.id}/pause` })).statusCode).toBe(200);
    await toolError(await connect(account.token), 'run_workflow', { workflow_id: workflow.id, input: {} }, 'conflict');
  });

  it('an unexpected upstream failure is an internal_error tool error with fixed text, not an HTTP 5xx', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const client = await connect(account.token);
    h.agentMemory.inject('SearchMemory', { fail: new Error('relation "memory_items" does not exist') });
    const failed = await toolError(client, 'search_memory', { agent_id: agent.id, query: 'q' }, 'internal_error');
    expect(failed.message).not.toContain('memory_items');
    h.agentMemory.inject('SearchMemory', { down: true });
    await toolError(client, 'search_memory', { agent_id: agent.id, query: 'q' }, 'service_unavailable');
  });

  it('an unknown tool is a JSON-RPC invalid params error, as MCP has it', async () => {
    const client = await connect((await newAccount(h.app)).token);
    const failure = await callTool(client, 'delete_everything').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((failure as McpError).message).toContain('delete_everything');
  });
});

describe('the transport', () => {
  it('answers GET and DELETE with 405 and Allow: POST: no event stream, no session', async () => {
    const account = await newAccount(h.app);
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl(h), { method, headers: { authorization: `Bearer ${account.token}`, accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('stateless') }, id: null });
    }
  });

  it('answers with JSON and no session id, and refuses batches, a missing Accept and malformed JSON', async () => {
    const account = await newAccount(h.app);
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    // No initialize first: a stateless server answers any request on its own.
    const listed = await postMcp(h, account.token, list);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toContain('application/json');
    expect(listed.headers.get('mcp-session-id')).toBeNull();
    expect(listed.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(await listed.json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { tools: expect.any(Array) } });

    const notified = await postMcp(h, account.token, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notified.status).toBe(202);
    expect(await notified.text()).toBe('');

    const batch = await postMcp(h, account.token, [list, { ...list, id: 8 }]);
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest }, id: null });
    expect((await postMcp(h, account.token, list, { accept: 'application/json' })).status).toBe(406);
    expect((await postMcp(h, account.token, { jsonrpc: '2.0', id: 1 })).status).toBe(400);

    const malformed = await fetch(mcpUrl(h), { method: 'POST', headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'invalid_request' });
  });
});
