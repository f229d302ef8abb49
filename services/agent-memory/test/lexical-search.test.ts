/**
 * The full-text half of hybrid search on a memory where one query word is in most items: the
 * rarer word must still bring its items in, though the vector half never offers them and the
 * common word's matches outnumber what one search ranks. And how its finds are scored: by the
 * index, or from the database when the index lacks one (a crash between the two); and that the
 * vector half's finds are read beside them, though they hold none of the query's words.
 */
import { expect } from 'vitest';
import type { Embedder } from '../src/models/embedder.js';
import { EmbeddedVectorStore } from '../src/vectors/embedded-vector-store.js';
import { agentMemoryTest, newTenant } from './support/harness.js';

const QUERY = 'common needle';
const COMMON_ITEMS = 250;

/** The query's direction is [1, 0, …]; common items lie nearer to it (cos 0.9) than needles (cos 0.85). */
function towardQuery(similarity: number): Float32Array {
  const vector = new Float32Array(8);
  vector[0] = similarity;
  vector[1] = Math.sqrt(1 - similarity * similarity);
  return vector;
}

function similarityOf(text: string): number {
  if (text.startsWith('The needle')) return 0.85;
  if (text.startsWith('Meaning alone')) return 0.99;
  return 0.9;
}

const steered: Embedder = {
  model: 'steered-test',
  dimensions: 8,
  embed: (texts) => Promise.resolve(texts.map((text) => (text === QUERY ? towardQuery(1) : towardQuery(similarityOf(text))))),
};

const vectors = new EmbeddedVectorStore({ directory: undefined, dimensions: steered.dimensions, model: steered.model });
const test = agentMemoryTest({ embedder: steered, vectors });

test('a rare query word finds its items among many holding a common one', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
  const addCommon = async (from: number) => {
    for (let first = from; first < from + COMMON_ITEMS; first += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, offset) =>
          service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: `A common note, number ${first + offset}.` }, call),
        ),
      );
    }
  };
  // Between two runs of common items, more than one search ranks from either end (oldest or
  // newest first), and "commons" is not "common" to PostgreSQL's simple configuration: only
  // "needle" brings these in, and only the ranking's plural folding sees both words in them.
  await addCommon(0);
  const needles = [];
  for (let index = 0; index < 3; index += 1) {
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: `The needle ${index} among the commons.` }, call);
    needles.push(item!.id);
  }
  await addCommon(COMMON_ITEMS);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: QUERY, topK: 3 }, call);
  expect(results.map((result) => result.item!.id).sort()).toEqual([...needles].sort());
  // Full marks on both words, cosine 0.85: 0.6 × 0.85 + 0.4 × 1.
  expect(results[0]?.score).toBeCloseTo(0.91, 5);

  // A word too long to be counted (an identifier, a hash) is taken as rare: it still finds its item.
  const token = 'k'.repeat(70);
  const { item: keyed } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: `The needle of ${token} among the commons.` }, call);
  const { results: byToken } = await service.memory.searchMemory({ agentId: agent.id, query: `common ${token}`, topK: 1 }, call);
  expect(byToken.map((result) => result.item!.id)).toEqual([keyed!.id]);
});

test('a full-text find the index has lost is scored from its stored vector', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
  const { item: kept } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The needle kept among the commons.' }, call);
  const { item: lost } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The needle lost among the commons.' }, call);
  await vectors.delete([lost!.id]);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: QUERY, topK: 5 }, call);
  // Both hold every word (coverage 1) at cosine 0.85, the lost one scored from the database's copy.
  expect(new Map(results.map((result) => [result.item!.id, result.score]))).toEqual(
    new Map([
      [kept!.id, expect.closeTo(0.91, 5)],
      [lost!.id, expect.closeTo(0.91, 5)],
    ]),
  );
});

test('an item that holds none of the query’s words is found by its vector alone', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
  for (let number = 0; number < 3; number += 1) {
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: `A common note, number ${number}.` }, call);
  }
  const { item: meant } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Meaning alone, in other terms.' }, call);

  const { results } = await service.memory.searchMemory({ agentId: agent.id, query: QUERY, topK: 5 }, call);
  // No word of the query (coverage 0), cosine 0.99: 0.6 × 0.99. The notes hold "common": 0.6 × 0.9 + 0.4 × 0.5.
  expect(results.map((result) => [result.item!.id, result.score])).toContainEqual([meant!.id, expect.closeTo(0.594, 5)]);
  expect(results).toHaveLength(4);
});
