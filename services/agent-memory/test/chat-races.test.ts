import { expect } from 'vitest';
import type { ChatCompletion, ChatModel, ChatRequest } from '../src/models/chat-model.js';
import { OfflineChatModel } from '../src/models/offline-chat-model.js';
import { agentMemoryTest, expectError, newTenant } from './support/harness.js';

/**
 * The offline model, held at a gate while the test wants a chat turn's model call in flight.
 * Memory extraction of an earlier turn also calls the model, in the background: it asks for a JSON
 * answer (`responseFormat`) and passes the gate, so `waiting` only ever means the turn arrived.
 */
class GatedModel implements ChatModel {
  readonly name = 'gated';
  private readonly inner = new OfflineChatModel();
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  private arrived: () => void = () => undefined;
  /** Resolves once a call waits at the closed gate. */
  waiting: Promise<void> = Promise.resolve();

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
    this.waiting = new Promise((resolve) => (this.arrived = resolve));
  }

  release(): void {
    this.open();
  }

  async complete(request: ChatRequest): Promise<ChatCompletion> {
    if (request.responseFormat) return this.inner.complete(request);
    this.arrived();
    await this.gate;
    return this.inner.complete(request);
  }

  async *stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void> {
    this.arrived();
    await this.gate;
    return yield* this.inner.stream(request);
  }
}

const model = new GatedModel();
const test = agentMemoryTest({ model });

test('an agent deleted while its model answers leaves no session, message or charge behind', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);

  model.hold();
  const refused = expectError(service.chat.chat({ agentId: agent.id, message: 'Are you still there?' }, call), 'not_found');
  await model.waiting;
  await service.agents.deleteAgent({ agentId: agent.id }, call);
  model.release();
  await refused;

  expect(await database.query(`select 1 from chat_sessions where tenant_id = $1`, [tenant.tenantId])).toEqual([]);
  expect(await database.query(`select 1 from chat_messages where tenant_id = $1`, [tenant.tenantId])).toEqual([]);
  expect(await database.query(`select 1 from outbox where payload->>'tenant_id' = $1 and payload->>'type' like 'agent.message.%'`, [tenant.tenantId])).toEqual([]);
  expect(service.credits.charges).toEqual([]);
});

test('a session deleted while its model answers is not written back', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);
  const first = await service.chat.chat({ agentId: agent.id, message: 'one' }, call);

  model.hold();
  const refused = expectError(service.chat.chat({ agentId: agent.id, message: 'two', sessionId: first.sessionId }, call), 'not_found');
  await model.waiting;
  await service.chat.deleteSession({ agentId: agent.id, sessionId: first.sessionId }, call);
  model.release();
  await refused;
  expect(await database.query(`select 1 from chat_messages where session_id = $1`, [first.sessionId])).toEqual([]);
});
