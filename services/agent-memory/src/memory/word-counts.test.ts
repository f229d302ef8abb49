import { describe, expect, it } from 'vitest';
import { WORD_COUNT_TTL_MS, WORD_COUNTS_MAX, WordCounts } from './word-counts.js';

describe('WordCounts', () => {
  it("knows an agent's counts until they expire, and never another agent's", () => {
    let now = 1_000;
    const counts = new WordCounts(() => now);
    counts.remember('tnt_a', 'agt_a', new Map([['refund', 201], ['ord', 3]]));
    expect(counts.lookup('tnt_a', 'agt_a', ['refund', 'ord', 'parcel'])).toEqual({ known: new Map([['refund', 201], ['ord', 3]]), unknown: ['parcel'] });
    expect(counts.lookup('tnt_a', 'agt_b', ['refund']).unknown).toEqual(['refund']);
    expect(counts.lookup('tnt_b', 'agt_a', ['refund']).unknown).toEqual(['refund']);
    now += WORD_COUNT_TTL_MS;
    expect(counts.lookup('tnt_a', 'agt_a', ['refund', 'ord']).unknown).toEqual(['refund', 'ord']);
  });

  it('makes room by forgetting the counts remembered longest ago', () => {
    const counts = new WordCounts();
    counts.remember('tnt_a', 'agt_a', new Map([['first', 1], ['second', 2]]));
    counts.remember('tnt_a', 'agt_a', new Map([['first', 1]]));
    counts.remember('tnt_a', 'agt_a', new Map(Array.from({ length: WORD_COUNTS_MAX - 1 }, (_, index) => [`word${index}`, index])));
    // "first" was remembered again after "second", so "second" went first.
    expect(counts.lookup('tnt_a', 'agt_a', ['first', 'second', 'word0']).unknown).toEqual(['second']);
  });
});
