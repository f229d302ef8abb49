import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { ChatResponse, StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { z } from 'zod';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';
import { startMcpServer, type McpTestServer } from './support/mcp-server.js';
import { databaseTest, eventsOf, expectError, newTenant, startAgentMemory, type AgentMemoryHarness } from './support/harness.js';
import { agentWith, httpTool, NUMBER_SCHEMA } from './support/turn-tools.js';

/** decisions §12: the tool loop of a chat turn, with the offline model and an OpenAI-compatible one. */

// Tools call a receiver on loopback: the address policy must allow private networks here.
const ENV = { ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: '1000' };

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => {
    if (request.path.startsWith('/fail')) return { status: 503, body: 'down for maintenance' };
    if (request.path.startsWith('/hang')) return { hold: 'answer' };
    return { json: { echoed: request.json ?? null, path: request.path } };
  });
});
afterAll(() => receiver.close());

async function collect(events: AsyncIterable<StreamChatResponse>): Promise<StreamChatResponse[]> {
  const all: StreamChatResponse[] = [];
  for await (const event of events) all.push(event);
  return all;
}

const offline = databaseTest.extend('service', { scope: 'file' }, async ({ database }, { onCleanup }) => {
  const service = await startAgentMemory(database, { env: ENV });
  onCleanup(() => service.stop());
  return service;
});

describe('Tools in a turn, with the offline model', () => {
  offline('calls the tool the message names with its JSON, gives the result back and answers quoting it; stores, lists and charges every round', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const toolId = await httpTool(service, tenant, receiver, 'lookup_order', '/orders');
    const agentId = await agentWith(service, tenant, [toolId]);

    const reply = await service.chat.chat({ agentId, message: 'Please lookup_order {"n": 1042} for me' }, call);
    expect(reply.status).toBe('completed');
    expect(reply.toolCalls).toEqual([
      expect.objectContaining({ toolId, name: 'lookup_order', argumentsJson: '{"n":1042}', status: 'completed', resultJson: JSON.stringify({ echoed: { n: 1042 }, path: '/orders' }) }),
    ]);
    expect(reply.toolCalls[0]!.id).toMatch(/^call_/);
    expect(reply.toolCalls[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(reply.content).toContain('Tool results (1):');
    expect(reply.content).toContain('lookup_order: "{"echoed":{"n":1042}');
    expect(receiver.received('/orders').at(-1)!.json).toEqual({ n: 1042 });

    const { items } = await service.chat.listSessionMessages({ agentId, sessionId: reply.sessionId, page: undefined }, call);
    expect(items.map((message) => [message.role, message.status ?? null])).toEqual([
      ['user', null],
      ['assistant', 'completed'],
      ['tool', 'completed'],
      ['assistant', 'completed'],
    ]);
    expect(items[1]!.toolCalls.map((one) => one.id)).toEqual([reply.toolCalls[0]!.id]);
    expect(items[2]).toMatchObject({ toolCallId: reply.toolCalls[0]!.id, name: 'lookup_order', content: JSON.stringify({ echoed: { n: 1042 }, path: '/orders' }) });
    expect(items[3]!.id).toBe(reply.id);
    // Two model rounds, each charged by its own usage; the answer shows the turn's sum.
    expect(service.credits.chargeOf(tenant.tenantId, items[1]!.id)).toBeGreaterThanOrEqual(1);
    expect(service.credits.chargeOf(tenant.tenantId, reply.id)).toBeGreaterThanOrEqual(1);
    expect(reply.usage!.totalTokens).toBe(items[1]!.usage!.totalTokens + items[3]!.usage!.totalTokens);
    const [completed] = await eventsOf(service.database, tenant.tenantId, 'agent.message.completed');
    expect(completed!.data).toMatchObject({ message_id: reply.id, tokens_used: reply.usage!.totalTokens });
  });

  offline('runs the named tools in parallel; a failing one and a hanging one are errors given to the model, and the turn still ends well', async ({ service }) => {
    const tenant = newTenant();
    const tools = [await httpTool(service, tenant, receiver, 'good_tool', '/good'), await httpTool(service, tenant, receiver, 'bad_tool', '/fail'), await httpTool(service, tenant, receiver, 'slow_tool', '/hang')];
    const agentId = await agentWith(service, tenant, tools);
    const reply = await service.chat.chat({ agentId, message: 'use slow_tool, bad_tool and good_tool' }, { principal: tenant.principal });
    expect(reply.status).toBe('completed');
    expect(reply.toolCalls.map((one) => [one.name, one.status])).toEqual([
      ['slow_tool', 'failed'],
      ['bad_tool', 'failed'],
      ['good_tool', 'completed'],
    ]);
    expect(reply.toolCalls[0]!.error).toMatch(/timed out/);
    expect(reply.toolCalls[1]!.error).toMatch(/503/);
    expect(reply.content).toContain('Tool results (3):');
    // All three were asked for before any answered: they ran side by side.
    const slowAt = receiver.received((request) => request.path.startsWith('/hang')).at(-1)!.receivedAt;
    const goodAt = receiver.received('/good').at(-1)!.receivedAt;
    expect(Math.abs(goodAt - slowAt)).toBeLessThan(900);
    receiver.release((request) => request.path.startsWith('/hang'));
  });

  offline('streams tool.call and tool.result before the deltas of the answer', async ({ service }) => {
    const tenant = newTenant();
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'ping_tool', '/ping')]);
    const events = await collect(service.chat.streamChat({ agentId, message: 'ping_tool {"n": 7}' }, { principal: tenant.principal }));
    const kinds = events.map((event) => (event.toolCall ? 'call' : event.toolResult ? 'result' : event.delta !== undefined ? 'delta' : 'completed'));
    expect(kinds.slice(0, 2)).toEqual(['call', 'result']);
    expect(kinds.at(-1)).toBe('completed');
    expect(kinds.slice(2, -1).every((kind) => kind === 'delta')).toBe(true);
    expect(events[0]!.toolCall).toEqual({ id: expect.stringMatching(/^call_/), name: 'ping_tool', arguments: '{"n":7}' });
    expect(events[1]!.toolResult).toMatchObject({ id: events[0]!.toolCall!.id, status: 'completed' });
    const completed = events.at(-1)!.completed!;
    expect(events.flatMap((event) => (event.delta === undefined ? [] : [event.delta])).join('')).toBe(completed.content);
  });

  offline('stops at a call that needs approval; approve runs it exactly once and continues the turn; a second decision is 409', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const refundId = await httpTool(service, tenant, receiver, 'refund', '/refund', true);
    const agentId = await agentWith(service, tenant, [refundId]);
    const before = receiver.received('/refund').length;

    const paused = await service.chat.chat({ agentId, message: 'refund {"n": 5}' }, call);
    expect(paused.status).toBe('awaiting_approval');
    expect(paused.content).toBe('');
    const pending = paused.toolCalls[0]!;
    expect(pending).toMatchObject({ name: 'refund', status: 'awaiting_approval', argumentsJson: '{"n":5}' });
    expect(receiver.received('/refund')).toHaveLength(before);
    const [requested] = await eventsOf(service.database, tenant.tenantId, 'agent.tool_call.approval_requested');
    expect(requested!.data).toEqual({ agent_id: agentId, session_id: paused.sessionId, call_id: pending.id, name: 'refund', arguments: { n: 5 } });
    // The session takes no new message while the call waits.
    await expectError(service.chat.chat({ agentId, message: 'hello?', sessionId: paused.sessionId }, call), 'conflict');

    const decision = { agentId, sessionId: paused.sessionId, callId: pending.id, approve: true, comment: 'ok by me' };
    const racing = await Promise.allSettled([service.chat.decideToolCall(decision, call), service.chat.decideToolCall(decision, call)]);
    const won = racing.filter((result) => result.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(racing.find((result) => result.status === 'rejected')).toMatchObject({ reason: expect.objectContaining({ code: 'conflict' }) });
    expect(receiver.received('/refund')).toHaveLength(before + 1);

    const reply = (won[0] as PromiseFulfilledResult<{ reply?: ChatResponse }>).value.reply!;
    expect(reply.status).toBe('completed');
    expect(reply.sessionId).toBe(paused.sessionId);
    expect(reply.content).toContain('refund: "{"echoed":{"n":5}');
    expect(reply.toolCalls).toEqual([
      expect.objectContaining({ id: pending.id, status: 'completed', decidedBy: tenant.principal.userId, comment: 'ok by me', decidedAt: expect.any(Date) }),
    ]);
    await expectError(service.chat.decideToolCall({ ...decision, approve: false }, call), 'conflict');
    // The session goes on, with the call and its result in its history.
    const next = await service.chat.chat({ agentId, message: 'thanks', sessionId: paused.sessionId }, call);
    expect(next.content).toContain('This session has 1 earlier turn.');
  });

  offline('reject tells the model the call was rejected, with the comment; the tool never runs', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'wire_money', '/wire', true)]);
    const paused = await service.chat.chat({ agentId, message: 'wire_money {"n": 900}' }, call);
    const callId = paused.toolCalls[0]!.id;
    const { reply } = await service.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId, approve: false, comment: 'too much' }, call);
    expect(reply!.status).toBe('completed');
    expect(reply!.toolCalls[0]).toMatchObject({ status: 'rejected', error: `rejected by ${tenant.principal.userId}: too much`, comment: 'too much' });
    expect(reply!.content).toContain('too much');
    expect(receiver.received('/wire')).toEqual([]);
  });

  offline('a decision names a call of that session of that agent of the tenant, else not found', async ({ service }) => {
    const tenant = newTenant();
    const other = newTenant();
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'gated', '/gated', true)]);
    const paused = await service.chat.chat({ agentId, message: 'gated' }, { principal: tenant.principal });
    const decision = { agentId, sessionId: paused.sessionId, callId: paused.toolCalls[0]!.id, approve: true };
    await expectError(service.chat.decideToolCall(decision, { principal: other.principal }), 'not_found');
    await expectError(service.chat.decideToolCall({ ...decision, callId: 'call_01JD0F3G4H5J6K7M8N9P0QRSTV' }, { principal: tenant.principal }), 'not_found');
    await expectError(service.chat.decideToolCall({ ...decision, callId: 'nonsense' }, { principal: tenant.principal }), 'not_found');
    await expectError(service.chat.decideToolCall({ ...decision, comment: 'x'.repeat(2_001) }, { principal: tenant.principal }), 'validation_error');
  });
});

describe("An MCP server's tools in a turn", () => {
  let mcp: McpTestServer;
  const hung = Promise.withResolvers<void>();
  beforeAll(async () => {
    const input = { text: z.string().optional() };
    mcp = await startMcpServer({
      tools: {
        echo: { input, run: (args) => ({ content: [{ type: 'text', text: `echo: ${String(args['text'])}` }] }) },
        broken: { input, run: () => ({ isError: true, content: [{ type: 'text', text: 'the ledger is locked' }] }) },
        stall: {
          input,
          run: () => {
            hung.resolve();
            return new Promise(() => undefined);
          },
        },
        huge: { input, run: () => ({ content: [{ type: 'text', text: 'x'.repeat(100_000) }] }) },
      },
    });
  });
  afterAll(() => mcp.close());

  offline('are discovered, offered as <tool>__<name> and called through chat: an answer, an error, a hang cut at the time-out, a huge answer cut at 64 KiB; the turn completes', async ({ service }) => {
    const tenant = newTenant();
    const { tool } = await service.tools.createTool({ name: 'srv', type: 'mcp', configJson: JSON.stringify({ url: mcp.url }) }, { principal: tenant.principal });
    const agentId = await agentWith(service, tenant, [tool!.id]);
    const reply = await service.chat.chat({ agentId, message: 'srv__echo, srv__broken, srv__stall and srv__huge {"text": "hi"}' }, { principal: tenant.principal });
    await hung.promise;
    expect(reply.status).toBe('completed');
    expect(reply.toolCalls.map((call) => [call.name, call.status])).toEqual([
      ['srv__echo', 'completed'],
      ['srv__broken', 'failed'],
      ['srv__stall', 'failed'],
      ['srv__huge', 'completed'],
    ]);
    expect(JSON.parse(reply.toolCalls[0]!.resultJson!)).toBe('echo: hi');
    expect(reply.toolCalls[1]!.error).toContain('the ledger is locked');
    expect(reply.toolCalls[2]!.error).toMatch(/timed out/);
    const huge = JSON.parse(reply.toolCalls[3]!.resultJson!) as { truncated: boolean; text: string };
    expect(huge.truncated).toBe(true);
    expect(Buffer.byteLength(reply.toolCalls[3]!.resultJson!)).toBeLessThanOrEqual(64 * 1024);
    expect(reply.content).toContain('Tool results (4):');
  });
});

describe('Approvals across a restart', () => {
  databaseTest('a turn paused on one replica is approved on another, started afresh on the same database, and continues', async ({ database }) => {
    const first = await startAgentMemory(database, { env: ENV });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    let paused: ChatResponse;
    let agentId: string;
    try {
      agentId = await agentWith(first, tenant, [await httpTool(first, tenant, receiver, 'close_account', '/close', true)]);
      paused = await first.chat.chat({ agentId, message: 'close_account {"n": 3}' }, call);
    } finally {
      await first.stop();
    }
    const second = await startAgentMemory(database, { env: ENV });
    try {
      const { reply } = await second.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId: paused.toolCalls[0]!.id, approve: true }, call);
      expect(reply).toMatchObject({ status: 'completed', sessionId: paused.sessionId, toolCalls: [{ id: paused.toolCalls[0]!.id, status: 'completed' }] });
      expect(receiver.received('/close')).toHaveLength(1);
      const { items } = await second.chat.listSessionMessages({ agentId, sessionId: paused.sessionId, page: undefined }, call);
      expect(items.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    } finally {
      await second.stop();
    }
  });
});

describe('Tools in a turn, with an OpenAI-compatible model', () => {
  let fake: FakeOpenAI;
  let service: AgentMemoryHarness | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await service?.stop();
    await fake.close();
  });

  databaseTest('sends the tools, follows tool_calls (whole and streamed), puts calls and results back in later turns, and stops at max_tool_rounds', async ({ database }) => {
    service = await startAgentMemory(database, { env: { ...ENV, LLM_BASE_URL: fake.baseURL, LLM_MODEL: 'tiny' } });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const toolId = await httpTool(service, tenant, receiver, 'lookup_order', '/orders');
    // Without extraction: its own model calls would interleave with the turns' on the fake server.
    const agentId = await agentWith(service, tenant, [toolId], { max_tool_rounds: 2, memory_extraction: false });

    fake.chatNext(
      { kind: 'tool-calls', calls: [{ name: 'lookup_order', arguments: '{"n":1}' }, { name: 'no_such_tool', arguments: '{}' }, { name: 'lookup_order', arguments: '[1,2]' }] },
      { kind: 'answer', content: 'Order 1 is on its way.' },
    );
    const seen = fake.requests.length;
    const reply = await service.chat.chat({ agentId, message: 'Where is order 1?' }, call);
    expect(reply.content).toBe('Order 1 is on its way.');
    expect(reply.toolCalls.map((one) => [one.name, one.status, one.error ?? null])).toEqual([
      ['lookup_order', 'completed', null],
      ['no_such_tool', 'failed', 'no tool named "no_such_tool" is offered to this agent'],
      ['lookup_order', 'failed', 'the arguments are not a JSON object'],
    ]);
    const [first, second] = fake.requests.slice(seen).map((request) => request.body as Record<string, unknown>);
    expect(first!['tools']).toEqual([{ type: 'function', function: { name: 'lookup_order', description: 'Calls /orders', parameters: JSON.parse(NUMBER_SCHEMA) as unknown } }]);
    expect(first!['tool_choice']).toBe('auto');
    const given = second!['messages'] as Record<string, unknown>[];
    expect(given.at(-4)).toMatchObject({ role: 'assistant', content: null, tool_calls: reply.toolCalls.map((one): unknown => expect.objectContaining({ id: one.id })) });
    expect(given.slice(-3).map((message) => [message['role'], message['tool_call_id']])).toEqual(reply.toolCalls.map((one) => ['tool', one.id]));

    // Streamed, with the arguments in interleaved fragments; then a model that never stops asking.
    fake.chat({ kind: 'tool-calls', calls: [{ name: 'lookup_order', arguments: '{"n":2, "note":"fragmented"}' }, { name: 'lookup_order', arguments: '{"n":3}' }] });
    const before = fake.requests.length;
    const events = await collect(service.chat.streamChat({ agentId, message: 'And orders 2 and 3?', sessionId: reply.sessionId }, call));
    const calls = events.flatMap((event) => (event.toolCall ? [event.toolCall] : []));
    expect(calls.map((one) => one.arguments)).toEqual(['{"n":2, "note":"fragmented"}', '{"n":3}', '{"n":2, "note":"fragmented"}', '{"n":3}']);
    const requests = fake.requests.slice(before).map((request) => request.body as Record<string, unknown>);
    // Two rounds of calls (max_tool_rounds: 2), then a last one that must answer.
    expect(requests.map((request) => request['tool_choice'])).toEqual(['auto', 'auto', 'none']);
    const history = requests[0]!['messages'] as Record<string, unknown>[];
    expect(history.filter((message) => message['role'] === 'tool').map((message) => message['tool_call_id'])).toEqual(reply.toolCalls.map((one) => one.id));
    const completed = events.at(-1)!.completed!;
    expect(completed.status).toBe('completed');
    expect(completed.toolCalls).toHaveLength(4);
    fake.chat({ kind: 'answer' });
  });
});
