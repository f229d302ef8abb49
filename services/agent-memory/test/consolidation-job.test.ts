import { expect, vi } from 'vitest';
import { agentMemoryTest, eventsOf, newTenant } from './support/harness.js';

// The periodic job: every second here, leaving no message unsummarised.
const test = agentMemoryTest({ env: { CONSOLIDATION_INTERVAL_SECONDS: '1', CONSOLIDATION_KEEP_MESSAGES: '0' } });

test('the periodic job consolidates sessions on its own and emits memory.consolidated', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  // Without extraction, which would store the badge number as a fact of its own.
  const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
  await service.chat.chat({ agentId: agent.id, message: 'My badge number is 80417.' }, call);

  await vi.waitFor(async () => expect(await eventsOf(service.database, tenant.tenantId, 'memory.consolidated')).toHaveLength(1), { timeout: 10_000, interval: 100 });
  const [event] = await eventsOf(service.database, tenant.tenantId, 'memory.consolidated');
  expect(event!.data).toEqual({ agent_id: agent.id, memory_type: 'semantic', items_in: 2, items_out: 1 });
  const found = await service.memory.searchMemory({ agentId: agent.id, query: 'badge 80417', topK: 1 }, call);
  expect(JSON.parse(found.results[0]!.item!.metadataJson)).toMatchObject({ source: 'consolidation' });
});
