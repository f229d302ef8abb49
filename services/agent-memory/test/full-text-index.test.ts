/**
 * The GIN indexes' pending lists stay short while many items arrive, so a search right after an
 * import does not scan megabytes of them (migration 0007). PostgreSQL's own `gin_clean_pending_list`
 * answers how many pending pages it merged.
 */
import { expect } from 'vitest';
import { GIN_PENDING_LIST_KB } from '../src/migrations/0007-short-gin-pending-lists.js';
import type { TestDatabase } from '@agent-platform/kit/testing';
import { agentMemoryTest, newTenant } from './support/harness.js';

const test = agentMemoryTest();
const PAGE_KB = 8;
const MOST_PENDING_PAGES = GIN_PENDING_LIST_KB / PAGE_KB + 1;

async function pendingPages(database: TestDatabase, index: string): Promise<number | undefined> {
  const [merged] = await database.query<{ pages: number }>(`select gin_clean_pending_list($1::regclass)::int as pages`, [index]);
  return merged?.pages;
}

test('storing a large document leaves at most the configured pending list, and its words are found', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);
  // Distinct words in every chunk: 1 MB of pending entries (128 pages) if they were all kept pending.
  const reference = (index: number) => `ref_${index}_${(index * 7919) % 100_003}`;
  const sentences = Array.from({ length: 12_000 }, (_, index) => `Entry ${index} names ${reference(index)} and code c${index * 31}.`);
  await service.documents.addTextDocument({ agentId: agent.id, content: sentences.join(' ') }, call);

  expect(await pendingPages(database, 'memory_items_search_idx')).toBeLessThanOrEqual(MOST_PENDING_PAGES);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: reference(11_999), topK: 3 }, call);
  expect(results[0]?.item?.content).toContain(reference(11_999));
});

test('items with many metadata values leave at most the configured pending list, and a filter finds them', async ({ service, database }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);
  // 50 distinct values in each of 800 items: ~100 pending pages if they were all kept pending.
  for (let item = 0; item < 800; item += 1) {
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, key) => [`k${key}`, `v${item}_${key}`]));
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: `Item ${item}`, metadataJson: JSON.stringify(metadata) }, call);
  }

  expect(await pendingPages(database, 'memory_items_metadata_idx')).toBeLessThanOrEqual(MOST_PENDING_PAGES);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'Item', topK: 3, filterJson: '{"k7":"v799_7"}' }, call);
  expect(results.map((result) => result.item?.content)).toEqual(['Item 799']);
});
