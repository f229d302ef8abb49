import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { as, expectError, ISO_MS, matching, newAccount, newApiKey, startHarness, type Account, type Harness } from '../support/harness.js';
import { eventsOf } from '../support/sse.js';
import { newTool } from '../support/tools.js';

/** decisions §12.6 and §12.10 through REST: tool calls in answers, sessions and streams; approvals. */

let h: Harness;
let receiver: Receiver;
beforeAll(async () => {
  // The tools call a receiver on loopback, which needs the development allowance.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
  receiver = await startReceiver((request) => ({ json: { order: request.json ?? null, state: 'shipped' } }));
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

const CALL_ID = /^call_[0-9A-HJKMNP-TV-Z]{26}$/;
const ORDER_SCHEMA = { type: 'object', properties: { order_id: { type: 'string' } } };

interface Reply {
  id: string;
  status: string;
  content: string;
  session_id: string;
  run_id: string;
  tool_calls: { id: string; status: string; result: unknown; error: string | null }[];
}

async function agentWithTool(account: Account, requiresApproval: boolean): Promise<{ agentId: string; toolId: string }> {
  const tool = await newTool(h.app, account.token, {
    name: 'track_order',
    config: { url: receiver.url('/track') },
    input_schema: ORDER_SCHEMA,
    requires_approval: requiresApproval,
  });
  const agent = await newAgent(h.app, account.token, { tools: [tool.id] });
  return { agentId: agent.id, toolId: tool.id };
}

function chat(credential: string, agentId: string, payload: Record<string, unknown>) {
  return as(h.app, credential, { method: 'POST', url: `/api/v1/agents/${agentId}/chat`, payload });
}

function decide(credential: string, reply: Reply, agentId: string, decision: 'approve' | 'reject', payload: Record<string, unknown> = {}) {
  const url = `/api/v1/agents/${agentId}/sessions/${reply.session_id}/tool-calls/${reply.tool_calls[0]!.id}/${decision}`;
  return as(h.app, credential, { method: 'POST', url, payload });
}

describe('a turn that calls a tool', () => {
  it('answers with its tool calls, lists them in the session, and streams tool.call and tool.result first', async () => {
    const account = await newAccount(h.app);
    const { agentId, toolId } = await agentWithTool(account, false);
    const answer = await chat(account.token, agentId, { message: 'track_order {"order_id": "A-1"}' });
    expect(answer.statusCode, answer.body).toBe(200);
    const reply = answer.json<Reply>();
    expect(reply).toMatchObject({ status: 'completed', role: 'assistant', model: 'offline' });
    expect(reply.tool_calls).toEqual([
      {
        id: matching(CALL_ID),
        tool_id: toolId,
        name: 'track_order',
        arguments: { order_id: 'A-1' },
        status: 'completed',
        result: { order: { order_id: 'A-1' }, state: 'shipped' },
        error: null,
        error_code: null,
        duration_ms: expect.any(Number) as unknown,
        decided_by: null,
        decided_at: null,
        comment: null,
      },
    ]);

    const listed = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agentId}/sessions/${reply.session_id}/messages` });
    expect(listed.statusCode, listed.body).toBe(200);
    const messages = listed.json<{ items: Record<string, unknown>[] }>().items;
    expect(messages.map((message) => [message['role'], message['status'], message['tool_call_id'], message['name']])).toEqual([
      ['user', null, null, null],
      ['assistant', 'completed', null, null],
      ['tool', 'completed', reply.tool_calls[0]!.id, 'track_order'],
      ['assistant', 'completed', null, null],
    ]);
    expect(messages[1]!['tool_calls']).toEqual(reply.tool_calls);
    expect(messages[2]!['content']).toBe(JSON.stringify({ order: { order_id: 'A-1' }, state: 'shipped' }));

    const streamed = await chat(account.token, agentId, { message: 'track_order {"order_id": "B-2"}', stream: true, session_id: reply.session_id });
    expect(streamed.statusCode).toBe(200);
    const events = eventsOf(streamed.body);
    expect(events.slice(0, 2)).toEqual([
      { event: 'tool.call', data: { id: matching(CALL_ID), name: 'track_order', arguments: { order_id: 'B-2' }, run_id: matching(/^run_/) } },
      { event: 'tool.result', data: { id: matching(CALL_ID), status: 'completed', result: { order: { order_id: 'B-2' }, state: 'shipped' }, run_id: matching(/^run_/) } },
    ]);
    expect(events.at(-1)).toMatchObject({ event: 'message.completed', data: { status: 'completed', tool_calls: [expect.objectContaining({ status: 'completed' })] } });
  });

  it('refuses max_tool_rounds out of 1..32 by name', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'Loopy', type: 'assistant', config: { max_tool_rounds: 0 } } });
    expect(expectError(created, 422, 'validation_error').details).toEqual([{ field: 'config.max_tool_rounds', message: 'must be an integer from 1 to 32' }]);
  });
});

describe('approvals through REST', () => {
  it('a gated call stops the turn; approve continues it as JSON, a second decision is 409, and the session then goes on', async () => {
    const account = await newAccount(h.app);
    const { agentId } = await agentWithTool(account, true);
    const before = receiver.received('/track').length;
    const paused = (await chat(account.token, agentId, { message: 'track_order {"order_id": "C-3"}' })).json<Reply>();
    expect(paused).toMatchObject({ status: 'awaiting_approval', content: '', tool_calls: [{ status: 'awaiting_approval', result: null }] });
    expect(receiver.received('/track')).toHaveLength(before);
    expectError(await chat(account.token, agentId, { message: 'hello?', session_id: paused.session_id }), 409, 'conflict');

    const approved = await decide(account.token, paused, agentId, 'approve', { comment: 'go ahead' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json<Reply>()).toMatchObject({
      status: 'completed',
      session_id: paused.session_id,
      tool_calls: [{ id: paused.tool_calls[0]!.id, status: 'completed', decided_by: account.userId, decided_at: matching(ISO_MS), comment: 'go ahead' }],
    });
    expect(receiver.received('/track')).toHaveLength(before + 1);
    expect(expectError(await decide(account.token, paused, agentId, 'reject'), 409, 'conflict').message).toBe('This tool call was already approved or rejected.');
    expect((await chat(account.token, agentId, { message: 'thanks', session_id: paused.session_id })).statusCode).toBe(200);
  });

  it('reject, streamed: the result says rejected, then the continued turn', async () => {
    const account = await newAccount(h.app);
    const { agentId } = await agentWithTool(account, true);
    const paused = (await chat(account.token, agentId, { message: 'track_order' })).json<Reply>();
    const rejected = await decide(account.token, paused, agentId, 'reject', { comment: 'not now', stream: true });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.headers['content-type']).toContain('text/event-stream');
    const events = eventsOf(rejected.body);
    expect(events[0]).toEqual({ event: 'tool.result', data: { id: paused.tool_calls[0]!.id, status: 'rejected', error: `rejected by ${account.userId}: not now`, run_id: paused.run_id } });
    expect(events.at(-1)).toMatchObject({ event: 'message.completed', data: { status: 'completed', tool_calls: [{ status: 'rejected', comment: 'not now' }] } });
  });

  it('a decision needs agents:write and the tenant: 403 for a viewer key, 404 across tenants and for unknown or malformed calls, 422 for a long comment', async () => {
    const account = await newAccount(h.app);
    const stranger = await newAccount(h.app);
    const { agentId } = await agentWithTool(account, true);
    const paused = (await chat(account.token, agentId, { message: 'track_order' })).json<Reply>();
    const reader = await newApiKey(h.app, account, ['agents:read']);
    expectError(await decide(reader.key, paused, agentId, 'approve'), 403, 'forbidden');
    expectError(await decide(stranger.token, paused, agentId, 'approve'), 404, 'not_found');
    const unknown = { ...paused, tool_calls: [{ ...paused.tool_calls[0]!, id: 'call_01JD0F3G4H5J6K7M8N9P0QRSTV' }] };
    expect(expectError(await decide(account.token, unknown, agentId, 'approve'), 404, 'not_found').message).toBe('Tool call not found.');
    // An id that is not a call's cannot name one: not found, as every other id (§2).
    const malformed = { ...paused, tool_calls: [{ ...paused.tool_calls[0]!, id: 'not-a-call' }] };
    expectError(await decide(account.token, malformed, agentId, 'approve'), 404, 'not_found');
    expectError(await decide(account.token, paused, agentId, 'approve', { comment: 'x'.repeat(2_001) }), 422, 'validation_error');
    // Still undecided after all that; a bare POST, with no body, decides it.
    const url = `/api/v1/agents/${agentId}/sessions/${paused.session_id}/tool-calls/${paused.tool_calls[0]!.id}/approve`;
    const bare = await as(h.app, account.token, { method: 'POST', url });
    expect(bare.statusCode, bare.body).toBe(200);
  });
});
