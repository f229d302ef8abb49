/**
 * The full-text index's pending list stays short while a large document is stored, so a search
 * right after an import does not scan megabytes of it (migration 0007). PostgreSQL's own
 * `gin_clean_pending_list` answers how many pending pages it merged.
 */
import { expect } from 'vitest';
import { GIN_PENDING_LIST_KB } from '../src/migrations/0007-short-gin-pending-lists.js';
import { agentMemoryTest, newTenant } from './support/harness.js';

const test = agentMemoryTest();
const PAGE_KB = 8;

test('storing a large document leaves at most the configured pending list, and its words are found', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);
  // Distinct words in every chunk: 1 MB of pending entries (128 pages) if they were all kept pending.
  const reference = (index: number) => `ref_${index}_${(index * 7919) % 100_003}`;
  const sentences = Array.from({ length: 12_000 }, (_, index) => `Entry ${index} names ${reference(index)} and code c${index * 31}.`);
  await service.memory.addDocument({ agentId: agent.id, content: sentences.join(' ') }, call);

  const [merged] = await database.query<{ pages: number }>(`select gin_clean_pending_list('memory_items_search_idx')::int as pages`);
  expect(merged?.pages).toBeLessThanOrEqual(GIN_PENDING_LIST_KB / PAGE_KB + 1);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: reference(11_999), topK: 3 }, call);
  expect(results[0]?.item?.content).toContain(reference(11_999));
});
