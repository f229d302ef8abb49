import { expect } from 'vitest';
import { ITEMS, QUERIES } from './fixtures/search-quality.js';
import { agentMemoryTest, newTenant } from './support/harness.js';

const test = agentMemoryTest();

// Floors under the measured figures (printed below); a ranking change that loses hits fails here.
const HIT_AT_1_FLOOR = 0.8;
const HIT_AT_5_FLOOR = 0.95;

test('hybrid search with the hashing embedder finds the labelled answers', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
  const keyOf = new Map<string, string>();
  for (const item of ITEMS) {
    const { item: stored } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: item.content }, call);
    keyOf.set(stored!.id, item.key);
  }
  expect(ITEMS.length).toBeGreaterThanOrEqual(50);
  expect(QUERIES.length).toBeGreaterThanOrEqual(20);

  let hitsAt1 = 0;
  let hitsAt5 = 0;
  const misses: string[] = [];
  for (const { query, expected } of QUERIES) {
    const { results } = await service.memory.searchMemory({ agentId: agent.id, query, topK: 5 }, call);
    const keys = results.map((result) => keyOf.get(result.item!.id));
    if (keys[0] === expected) hitsAt1 += 1;
    if (keys.includes(expected)) hitsAt5 += 1;
    else misses.push(`${query} → ${keys.join(', ')}`);
  }
  const hitAt1 = hitsAt1 / QUERIES.length;
  const hitAt5 = hitsAt5 / QUERIES.length;
  console.info(`search quality (hashing embedder, hybrid): hit@1 ${hitAt1.toFixed(2)}, hit@5 ${hitAt5.toFixed(2)} over ${QUERIES.length} queries, ${ITEMS.length} items`);
  expect(misses, 'queries whose answer is not in the top 5').toEqual([]);
  expect(hitAt1).toBeGreaterThanOrEqual(HIT_AT_1_FLOOR);
  expect(hitAt5).toBeGreaterThanOrEqual(HIT_AT_5_FLOOR);
});
