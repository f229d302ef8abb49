import { expect } from 'vitest';
import { agentMemoryTest, eventsOf, expectError, newTenant } from './support/harness.js';

const test = agentMemoryTest();

test("summarises a session's older messages into semantic memory, once, and records memory.consolidated", async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  // Without extraction, whose items would be semantic memory too.
  const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
  const first = await service.chat.chat({ agentId: agent.id, message: 'My favourite colour is vermilion.' }, call);
  await service.chat.chat({ agentId: agent.id, message: 'I live in Coimbra.', sessionId: first.sessionId }, call);
  await service.chat.chat({ agentId: agent.id, message: 'What do you know about me?', sessionId: first.sessionId }, call);

  // The two newest messages left alone, as the periodic job leaves CONSOLIDATION_KEEP_MESSAGES.
  const outcome = await service.memory.consolidateMemory({ agentId: agent.id, keepMessages: 2 }, call);
  expect(outcome).toEqual({ itemsIn: 4, itemsOut: 1 });
  const { items } = await service.memory.listMemory({ agentId: agent.id, memoryType: 'semantic', page: undefined }, call);
  expect(items).toHaveLength(1);
  expect(JSON.parse(items[0]!.metadataJson)).toEqual({ source: 'consolidation', session_id: first.sessionId });
  // The offline model's summary quotes the transcript it was given: the oldest turns are in it.
  expect(items[0]!.content).toContain('vermilion');
  const found = await service.memory.searchMemory({ agentId: agent.id, query: 'vermilion', topK: 1 }, call);
  expect(found.results[0]!.item!.id).toBe(items[0]!.id);
  expect(await eventsOf(service.database, tenant.tenantId, 'memory.consolidated')).toEqual([
    { data: { agent_id: agent.id, memory_type: 'semantic', items_in: 4, items_out: 1 } },
  ]);

  // Nothing new to summarise beyond the kept ones: a second run changes nothing and emits nothing.
  expect(await service.memory.consolidateMemory({ agentId: agent.id, keepMessages: 2 }, call)).toEqual({ itemsIn: 0, itemsOut: 0 });
  expect(await eventsOf(service.database, tenant.tenantId, 'memory.consolidated')).toHaveLength(1);
  // Without keep_messages, the newest are consolidated too.
  expect(await service.memory.consolidateMemory({ agentId: agent.id }, call)).toEqual({ itemsIn: 2, itemsOut: 1 });
});

test('is not_found for another tenant and refused for an agent without semantic memory', async ({ service }) => {
  const [tenant, stranger] = [newTenant(), newTenant()];
  const agent = await service.createAgent(tenant, { memoryTypes: ['episodic'] });
  await expectError(service.memory.consolidateMemory({ agentId: agent.id }, { principal: stranger.principal }), 'not_found');
  const refused = await expectError(service.memory.consolidateMemory({ agentId: agent.id }, { principal: tenant.principal }), 'validation_error');
  expect(refused.details.map((detail) => detail.field)).toEqual(['agent_id']);
});
