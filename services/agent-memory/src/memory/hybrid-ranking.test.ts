import { describe, expect, it } from 'vitest';
import { coverage, fullTextWords, meaningfulWords, rank, stem, VECTOR_WEIGHT, words, type Scored } from './hybrid-ranking.js';

function candidate(id: string, content: string, similarity: number, createdAt = new Date(0)): Scored {
  return { candidate: { id, agentId: 'agt_1', documentId: null, userId: null, memoryType: 'semantic', content, metadata: {}, createdAt, updatedAt: null }, similarity };
}

describe('lexical matching', () => {
  it('folds inflections onto one stem, and leaves words with digits alone', () => {
    const stems = (list: string[]) => new Set(list.map(stem));
    expect(stems(['move', 'moved', 'moving', 'moves'])).toEqual(new Set(['move']));
    expect(stems(['battery', 'batteries'])).toEqual(new Set(['batteri']));
    expect(stems(['box', 'boxes'])).toEqual(new Set(['box']));
    expect(['1990s', 'a17', 'ord4821s'].map(stem)).toEqual(['1990s', 'a17', 'ord4821s']);
  });

  it("finds an end user's fact told in another form of the question's word", () => {
    // "did" counts too, and is not in the fact; "move" is, as "moved" (it counted nothing before).
    expect(coverage(meaningfulWords('Where did I move?'), 'I moved to Porto.')).toBe(0.5);
    expect(coverage(meaningfulWords('Where is he living?'), 'He lives in Faro.')).toBe(1);
  });

  it('counts only meaningful words, unless a query has nothing else', () => {
    expect([...meaningfulWords('Is the battery covered?')]).toEqual(['batteri', 'cover']);
    expect([...meaningfulWords('who is it')]).toEqual(['who', 'is', 'it']);
    expect(coverage(meaningfulWords('battery covered'), 'Batteries are covered for a year.')).toBe(1);
    expect(coverage(meaningfulWords('battery warranty'), 'Batteries are covered for a year.')).toBe(0.5);
  });

  it('counts a word only where it stands whole, in any form that folds onto it', () => {
    expect(coverage(new Set(['box', 'citi']), 'Boxes and CITIES.')).toBe(1);
    expect(coverage(new Set(['box', 'citi']), 'a boxer, inboxes, velocity.')).toBe(0);
    expect(coverage(new Set(['ref', '3', '1200']), 'ref_3_1200 and ref_3_12000')).toBe(1);
    expect(coverage(new Set(['4821']), 'order 4821s')).toBe(0);
    expect(coverage(new Set(['glass']), 'two glasses')).toBe(1);
    expect(coverage(new Set(['straße']), 'STRASSE, Straßes')).toBe(1);
    expect(coverage(new Set(['happi']), 'Happy, happier, happiness')).toBe(1);
    // "refes" begins as a form of "ref" would, but its stem is "refe": the "ref" after it counts.
    expect(coverage(new Set(['ref']), 'refes')).toBe(0);
    expect(coverage(new Set(['ref', 'note']), 'refes, then a note on ref 7')).toBe(1);
  });

  it('finds the words that splitting the text into words and stemming each would find', () => {
    const texts = [
      'Batteries, parcels and boxes; the bus stops at 10:00.',
      'Ana Ribeiro’s cities: Porto, Lisbon — São Paulo’s 1990s buses',
      'glasses, addresses, statuses, analyses, ids, ord_4821 INV-2',
      'She moved, agreed, and was relating the conflated happiness of moving.',
    ];
    const queries = ['battery box bus 10', 'city porto são 1990s', 'glass address status analys id 4821 inv 2', 'paulo ribeiro ana parcel', 'move agree relational conflating happy'];
    for (const query of queries) {
      const queryWords = new Set(words(query).map(stem));
      for (const text of texts) {
        const folded = new Set(words(text).map(stem));
        const share = [...queryWords].filter((word) => folded.has(word)).length / queryWords.size;
        expect(coverage(queryWords, text), `${query} in ${text}`).toBe(share);
      }
    }
  });

  it('asks full-text search for any of the meaningful words, never with "or" as a word', () => {
    expect(fullTextWords('Where is ord_4821, or INV-2?')).toEqual(['ord', '4821', 'inv', '2']);
    expect(fullTextWords('who is it')).toEqual(['who', 'is', 'it']);
  });
});

describe('rank', () => {
  it('scores in [0, 1], best first, mixing vector and lexical evidence', () => {
    const ranked = rank('refund policy', [
      candidate('mem_far', 'nothing alike', -1),
      candidate('mem_words', 'our refund policy', 0),
      candidate('mem_both', 'refund policy in full', 1),
      candidate('mem_vector', 'unrelated words', 0.98),
    ], { limit: 10, minScore: 0 });
    expect(ranked.map((entry) => entry.candidate.id)).toEqual(['mem_both', 'mem_vector', 'mem_words', 'mem_far']);
    expect(ranked[0]!.score).toBe(1);
    expect(ranked.at(-1)!.score).toBe(0);
    expect(ranked[2]!.score).toBeCloseTo(1 - VECTOR_WEIGHT, 6);
  });

  it("counts the words of a document chunk's heading path, which its content does not hold", () => {
    const section = candidate('mem_chunk', 'Money goes back within five days.', 0);
    const chunk: Scored = { ...section, candidate: { ...section.candidate, documentId: 'doc_1', metadata: { heading: ['Returns', 'Refund policy'] } } };
    const [ranked] = rank('refund policy', [chunk], { limit: 1, minScore: 0 });
    expect(ranked!.candidate.content).toBe('Money goes back within five days.');
    expect(ranked!.score).toBeCloseTo(1 - VECTOR_WEIGHT, 6);
  });

  it('drops results under min_score and keeps at most limit; ties go to the newest', () => {
    const older = candidate('mem_old', 'same', 1, new Date(1_000));
    const newer = candidate('mem_new', 'same', 1, new Date(2_000));
    expect(rank('same', [older, newer], { limit: 1, minScore: 0 }).map((entry) => entry.candidate.id)).toEqual(['mem_new']);
    expect(rank('other', [candidate('mem_x', 'x', 0)], { limit: 5, minScore: 0.1 })).toEqual([]);
  });
});
