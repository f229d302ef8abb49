import { ManualClock, startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, expect } from 'vitest';
import { agentMemoryTest, eventsOf, newTenant } from './support/harness.js';
import { agentWith, httpTool } from './support/turn-tools.js';

/** A chat turn reads the time from the clock it is given and waits on it, never on the system's. */

const HOUR_MS = 3_600_000;
// Moved by hand only: a time the system's clock wrote would stand out.
const clock = new ManualClock();
const test = agentMemoryTest({ clock, env: { ALLOW_PRIVATE_NETWORK_URLS: 'true' } });

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => ({ json: { path: request.path } }));
});
afterAll(() => receiver.close());

test('a turn that waits an hour for an approval records the clock: messages, calls, the decision, the charges, the session and the latency', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const tools = [await httpTool(service, tenant, receiver, 'lookup_order', '/orders'), await httpTool(service, tenant, receiver, 'refund', '/refund', true)];
  const agentId = await agentWith(service, tenant, tools);

  const startedAt = new Date(clock.now());
  const paused = await service.chat.chat({ agentId, message: 'lookup_order, then refund {"n": 5}' }, call);
  expect(paused.status).toBe('awaiting_approval');
  expect(paused.createdAt).toEqual(startedAt);
  const refund = paused.toolCalls.find((one) => one.name === 'refund')!;

  clock.advance(HOUR_MS);
  const decidedAt = new Date(clock.now());
  const { reply } = await service.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId: refund.id, approve: true }, call);
  expect(reply).toMatchObject({ status: 'completed', createdAt: decidedAt });
  expect(reply!.toolCalls.find((one) => one.id === refund.id)!.decidedAt).toEqual(decidedAt);

  const messages = await database.query(`select role, created_at, charged_at from chat_messages where session_id = $1 order by seq`, [paused.sessionId]);
  expect(messages).toEqual([
    { role: 'user', created_at: startedAt, charged_at: null },
    { role: 'assistant', created_at: startedAt, charged_at: startedAt },
    { role: 'tool', created_at: startedAt, charged_at: null },
    { role: 'tool', created_at: decidedAt, charged_at: null },
    { role: 'assistant', created_at: decidedAt, charged_at: decidedAt },
  ]);
  const calls = await database.query(`select name, created_at, decided_at, finished_at from tool_calls where session_id = $1 order by position`, [paused.sessionId]);
  expect(calls).toEqual([
    { name: 'lookup_order', created_at: startedAt, decided_at: null, finished_at: startedAt },
    { name: 'refund', created_at: startedAt, decided_at: decidedAt, finished_at: decidedAt },
  ]);
  const [session] = await database.query(`select created_at, last_message_at from chat_sessions where id = $1`, [paused.sessionId]);
  expect(session).toEqual({ created_at: startedAt, last_message_at: decidedAt });
  const [completed] = await eventsOf(database, tenant.tenantId, 'agent.message.completed');
  expect(completed!.data).toMatchObject({ message_id: reply!.id, latency_ms: HOUR_MS });
});

test('a charge that fails is tried again after a back-off on the clock: the reply waits until the clock moves', async ({ service, database }) => {
  const tenant = newTenant();
  const agentId = await agentWith(service, tenant, []);
  service.credits.failCharges = 1;
  service.credits.failChargesOf = '';

  const replying = service.chat.chat({ agentId, message: 'hello' }, { principal: tenant.principal });
  await clock.untilSleeping();
  const charged = () => service.credits.charges.filter((charge) => charge.tenantId === tenant.tenantId);
  expect(charged()).toEqual([]);
  clock.advance(1_000);
  const reply = await replying;
  expect(charged()).toHaveLength(1);
  expect(service.credits.chargeOf(tenant.tenantId, reply.id)).toBeGreaterThan(0);
  const [message] = await database.query(`select charged_at from chat_messages where id = $1`, [reply.id]);
  expect(message).toEqual({ charged_at: new Date(clock.now()) });
});
