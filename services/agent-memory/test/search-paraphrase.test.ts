import { expect } from 'vitest';
import { HashingEmbedder } from '../src/models/hashing-embedder.js';
import { PARAPHRASE_ITEMS, PARAPHRASE_QUERIES } from './fixtures/paraphrase.js';
import { ownDatabaseTest as test } from './support/harness.js';
import { describeHits, searchHits } from './support/search-hits.js';

// Issue 43: the offline embedder finds answers worded otherwise than their questions, 3 in 4 at
// least among the first five. The hashing embedder it replaced is measured beside it, for the record.
const HIT_AT_5_FLOOR = 0.75;

test('hybrid search with the default embedder finds paraphrased answers, where hashing did not', async ({ database }) => {
  expect(PARAPHRASE_QUERIES.length).toBeGreaterThanOrEqual(30);
  const hashing = await searchHits(database, new HashingEmbedder(), PARAPHRASE_ITEMS, PARAPHRASE_QUERIES);
  const hybrid = await searchHits(database, undefined, PARAPHRASE_ITEMS, PARAPHRASE_QUERIES);
  const sizes = [PARAPHRASE_QUERIES.length, PARAPHRASE_ITEMS.length] as const;
  console.info(`${describeHits('search quality, paraphrase set (hashing embedder, hybrid search)', hashing, ...sizes)}\n${describeHits('search quality, paraphrase set (hybrid embedder, hybrid search)', hybrid, ...sizes)}\nmissed by the hybrid embedder:\n  ${hybrid.misses.join('\n  ')}`);
  expect(hybrid.hitAt5).toBeGreaterThanOrEqual(HIT_AT_5_FLOOR);
  expect(hybrid.hitAt5).toBeGreaterThan(hashing.hitAt5);
});
