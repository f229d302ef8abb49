import { fileURLToPath } from 'node:url';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { ManualClock, spawnChildService, startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { ToolServiceService } from '@agent-platform/proto/agents/v1/tools';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { INTERRUPTED_GRACE_MS } from '../src/chat/approvals.js';
import { agentMemoryTest, databaseTest, expectError, newTenant, startAgentMemory, TEST_TOOL_SECRET_KEY, type AgentMemoryHarness } from './support/harness.js';
import { agentWith, httpTool } from './support/turn-tools.js';

/** decisions §12: what becomes of a turn between a call's approval and its continuation. */

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
// Long enough that a call is still running when its replica is killed, not timed out first.
const TOOL_TIMEOUT_MS = 20_000;
// Tools call a receiver on loopback: the address policy must allow private networks here.
const ENV = { ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS) };
const INTERRUPTED = 'interrupted: the replica running it stopped; it may or may not have had its effect';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => (request.path.startsWith('/hang') ? { hold: 'answer' } : { json: { path: request.path } }));
});
afterAll(() => receiver.close());

describe('an approved call whose replica died while it ran', () => {
  databaseTest('blocks its session until its time-out and grace are up, is then closed as interrupted, never run again, and the session goes on', { timeout: 60_000 }, async ({ database }) => {
    const child = await spawnChildService('test/support/agent-memory-process.ts', {
      cwd: PACKAGE_DIR,
      env: { DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', TOOL_SECRET_KEY: TEST_TOOL_SECRET_KEY, ...ENV },
    });
    const channel = new GrpcChannel(`127.0.0.1:${child.ports[0]}`, { defaultDeadlineMs: 15_000 });
    let survivor: AgentMemoryHarness | undefined;
    try {
      const tenant = newTenant();
      const call = { principal: tenant.principal };
      const replica = { tools: channel.client(ToolServiceService), agents: channel.client(AgentServiceService), chat: channel.client(ChatServiceService) };
      const agentId = await agentWith(replica, tenant, [await httpTool(replica, tenant, receiver, 'close_account', '/hang/close', true)]);
      const paused = await replica.chat.chat({ agentId, message: 'close_account {"n": 3}' }, call);
      const callId = paused.toolCalls[0]!.id;

      // The replica approves the call and runs it; it is killed before the tool answers.
      const deciding = replica.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId, approve: true }, call).then(
        () => 'answered',
        () => 'dropped',
      );
      await receiver.waitFor((requests) => requests.some((request) => request.path === '/hang/close'));
      await child.kill();
      expect(await deciding).toBe('dropped');
      const [running] = await database.query<{ status: string; decided_at: Date }>(`select status, decided_at from tool_calls where id = $1`, [callId]);
      expect(running!.status).toBe('approved');

      const clock = new ManualClock(running!.decided_at.getTime());
      survivor = await startAgentMemory(database, { env: ENV, clock });
      const next = { agentId, message: 'Did it go through?', sessionId: paused.sessionId };
      // Until its time-out and the grace are up, the call may still be running on a live replica.
      clock.advance(TOOL_TIMEOUT_MS + INTERRUPTED_GRACE_MS - 1);
      await expectError(survivor.chat.chat(next, call), 'conflict');
      await expectError(survivor.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId, approve: true }, call), 'conflict');

      clock.advance(1);
      const reply = await survivor.chat.chat(next, call);
      expect(reply.status).toBe('completed');
      expect(reply.content).toContain('This session has 1 earlier turn.');
      expect(receiver.received('/hang/close')).toHaveLength(1);
      const [closed] = await database.query(`select status, error, finished_at from tool_calls where id = $1`, [callId]);
      expect(closed).toEqual({ status: 'failed', error: INTERRUPTED, finished_at: new Date(clock.now()) });
      // The model of the next turn is told, in its history, that the call was interrupted.
      const { items } = await survivor.chat.listSessionMessages({ agentId, sessionId: paused.sessionId, page: undefined }, call);
      expect(items.map((message) => [message.role, message.status ?? null])).toEqual([
        ['user', null],
        ['assistant', 'completed'],
        ['tool', 'failed'],
        ['user', null],
        ['assistant', 'completed'],
      ]);
      expect(items[2]).toMatchObject({ toolCallId: callId, content: JSON.stringify({ error: INTERRUPTED }) });
    } finally {
      channel.close();
      await child.kill();
      await survivor?.stop();
      receiver.release('/hang/close');
    }
  });
});

const offline = agentMemoryTest({ env: ENV });
const QUESTION = 'refund {"n": 5} to the bank account';

/**
 * A turn paused at a refund that waits for approval, given one memory; then, while the call waits,
 * that memory goes and another comes that a search for the message finds instead.
 */
async function pausedWhileMemoryChanges(service: AgentMemoryHarness) {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'refund', '/refund', true)], {}, ['semantic']);
  const { item: given } = await service.memory.addMemory({ agentId, memoryType: 'semantic', content: 'Refunds for this customer go to the bank account ending 1234.' }, call);
  const paused = await service.chat.chat({ agentId, message: QUESTION }, call);
  expect(paused.memories.map((memory) => memory.item!.id)).toEqual([given!.id]);

  await service.memory.deleteMemory({ memoryId: given!.id }, call);
  const { item: later } = await service.memory.addMemory({ agentId, memoryType: 'semantic', content: 'Refunds to a bank account take five days.' }, call);
  const found = await service.memory.searchMemory({ agentId, query: QUESTION, topK: 5, minScore: 0.1 }, call);
  expect(found.results.map((result) => result.item!.id)).toEqual([later!.id]);
  const approve = () => service.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId: paused.toolCalls[0]!.id, approve: true }, call);
  const storedMessages = async () => (await service.chat.listSessionMessages({ agentId, sessionId: paused.sessionId, page: undefined }, call)).items;
  return { paused, found: found.results, approve, storedMessages };
}

describe('a turn continued after a decision', () => {
  offline('is given, and keeps, the memories it began with, not what a search finds now', async ({ service }) => {
    const { paused, approve, storedMessages } = await pausedWhileMemoryChanges(service);
    const { reply } = await approve();
    expect(reply!.status).toBe('completed');
    expect(reply!.memories).toEqual(paused.memories);
    expect(reply!.content).toContain('Relevant memories (1):\n[1] "Refunds for this customer go to the bank account ending 1234."');
    const final = (await storedMessages()).at(-1)!;
    expect(final.id).toBe(reply!.id);
    expect(final.memories).toEqual(paused.memories);
  });

  offline('searches again when its round was stored before rounds kept their memories (migration 0010)', async ({ service, database }) => {
    const { paused, found, approve } = await pausedWhileMemoryChanges(service);
    await database.query(`update chat_messages set memories = null where session_id = $1`, [paused.sessionId]);
    const { reply } = await approve();
    expect(reply!.memories).toEqual(found);
    expect(reply!.content).toContain('Relevant memories (1):\n[1] "Refunds to a bank account take five days."');
  });
});
