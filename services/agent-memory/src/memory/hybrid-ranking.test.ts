import { describe, expect, it } from 'vitest';
import { normalised } from '../models/embedder.js';
import { fullTextWords, coverage, meaningfulWords, rank, singular, VECTOR_WEIGHT } from './hybrid-ranking.js';
import type { Candidate } from './memory.repository.js';

function candidate(id: string, content: string, vector: number[], createdAt = new Date(0)): Candidate {
  return { id, agentId: 'agt_1', documentId: null, userId: null, memoryType: 'semantic', content, metadata: {}, createdAt, updatedAt: null, embedding: normalised(vector)! };
}

describe('lexical matching', () => {
  it('folds plurals, leaves numbers and short words alone', () => {
    expect(['batteries', 'parcels', 'boxes', 'address', 'status', 'bus', 'ids', '1990s'].map(singular)).toEqual(['battery', 'parcel', 'box', 'address', 'status', 'bus', 'ids', '1990s']);
  });

  it('counts only meaningful words, unless a query has nothing else', () => {
    expect([...meaningfulWords('Is the battery covered?')]).toEqual(['battery', 'covered']);
    expect([...meaningfulWords('who is it')]).toEqual(['who', 'is', 'it']);
    expect(coverage(meaningfulWords('battery covered'), 'Batteries are covered for a year.')).toBe(1);
    expect(coverage(meaningfulWords('battery warranty'), 'Batteries are covered for a year.')).toBe(0.5);
  });

  it('asks full-text search for any of the meaningful words, never with "or" as a word', () => {
    expect(fullTextWords('Where is ord_4821, or INV-2?')).toEqual(['ord', '4821', 'inv', '2']);
    expect(fullTextWords('who is it')).toEqual(['who', 'is', 'it']);
  });
});

describe('rank', () => {
  const query = normalised([1, 0, 0])!;

  it('scores in [0, 1], best first, mixing vector and lexical evidence', () => {
    const ranked = rank('refund policy', query, [
      candidate('mem_far', 'nothing alike', [-1, 0, 0]),
      candidate('mem_words', 'our refund policy', [0, 1, 0]),
      candidate('mem_both', 'refund policy in full', [1, 0, 0]),
      candidate('mem_vector', 'unrelated words', [1, 0.2, 0]),
    ], { limit: 10, minScore: 0 });
    expect(ranked.map((entry) => entry.candidate.id)).toEqual(['mem_both', 'mem_vector', 'mem_words', 'mem_far']);
    expect(ranked[0]!.score).toBe(1);
    expect(ranked.at(-1)!.score).toBe(0);
    expect(ranked[2]!.score).toBeCloseTo(1 - VECTOR_WEIGHT, 6);
  });

  it('drops results under min_score and keeps at most limit; ties go to the newest', () => {
    const older = candidate('mem_old', 'same', [1, 0, 0], new Date(1_000));
    const newer = candidate('mem_new', 'same', [1, 0, 0], new Date(2_000));
    expect(rank('same', query, [older, newer], { limit: 1, minScore: 0 }).map((entry) => entry.candidate.id)).toEqual(['mem_new']);
    expect(rank('other', query, [candidate('mem_x', 'x', [0, 1, 0])], { limit: 5, minScore: 0.1 })).toEqual([]);
  });
});
