import type { Embedder } from '../../src/models/embedder.js';
import type { TestDatabase } from '@agent-platform/kit/testing';
import { newTenant, startAgentMemory } from './harness.js';

export interface SearchHits {
  hitAt1: number;
  hitAt5: number;
  /** Each query whose answer is not among the first five, with the keys found instead. */
  misses: string[];
}

/**
 * Stores `items` in a new agent of a service started with `embedder` (default: the configured
 * one, the hybrid embedder), asks every query for its top 5 through hybrid search, and answers the
 * share whose labelled item came first and among the five. The service is stopped before it answers.
 */
export async function searchHits(
  database: TestDatabase,
  embedder: Embedder | undefined,
  items: readonly { key: string; content: string }[],
  queries: readonly { query: string; expected: string }[],
): Promise<SearchHits> {
  const service = await startAgentMemory(database, embedder ? { embedder } : {});
  try {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const keyOf = new Map<string, string>();
    for (const item of items) {
      const { item: stored } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: item.content }, call);
      keyOf.set(stored!.id, item.key);
    }
    let hitsAt1 = 0;
    let hitsAt5 = 0;
    const misses: string[] = [];
    for (const { query, expected } of queries) {
      const { results } = await service.memory.searchMemory({ agentId: agent.id, query, topK: 5 }, call);
      const keys = results.map((result) => keyOf.get(result.item!.id));
      if (keys[0] === expected) hitsAt1 += 1;
      if (keys.includes(expected)) hitsAt5 += 1;
      else misses.push(`${query} → ${keys.join(', ')}`);
    }
    return { hitAt1: hitsAt1 / queries.length, hitAt5: hitsAt5 / queries.length, misses };
  } finally {
    await service.stop();
  }
}

export function describeHits(label: string, hits: SearchHits, queries: number, items: number): string {
  return `${label}: hit@1 ${hits.hitAt1.toFixed(2)}, hit@5 ${hits.hitAt5.toFixed(2)} over ${queries} queries, ${items} items`;
}
