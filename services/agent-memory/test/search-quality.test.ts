import { expect } from 'vitest';
import { HashingEmbedder } from '../src/models/hashing-embedder.js';
import { ITEMS, QUERIES } from './fixtures/search-quality.js';
import { ownDatabaseTest as test } from './support/harness.js';
import { describeHits, searchHits } from './support/search-hits.js';

// Floors under the measured figures (printed below); a ranking change that loses hits fails here.
const HIT_AT_1_FLOOR = 0.8;
const HIT_AT_5_FLOOR = 0.95;

// The lexical set: ids, names and the items' own words. The default hybrid embedder must find
// them as well as the hashing embedder it replaced, which configurations may still choose.
test.for([
  ['hybrid (the default)', undefined],
  ['hashing', new HashingEmbedder()],
] as const)('hybrid search with the %s embedder finds the labelled answers', async ([label, embedder], { database }) => {
  expect(ITEMS.length).toBeGreaterThanOrEqual(50);
  expect(QUERIES.length).toBeGreaterThanOrEqual(20);
  const hits = await searchHits(database, embedder, ITEMS, QUERIES);
  console.info(describeHits(`search quality, lexical set (${label} embedder, hybrid search)`, hits, QUERIES.length, ITEMS.length));
  expect(hits.misses, 'queries whose answer is not in the top 5').toEqual([]);
  expect(hits.hitAt1).toBeGreaterThanOrEqual(HIT_AT_1_FLOOR);
  expect(hits.hitAt5).toBeGreaterThanOrEqual(HIT_AT_5_FLOOR);
});
