import { describe, expect, it } from 'vitest';
import { cosine } from '../../src/models/embedder.js';
import { HashingEmbedder } from '../../src/models/hashing-embedder.js';
import { HYBRID_DIMENSIONS, HYBRID_MODEL, HybridEmbedder } from '../../src/models/hybrid-embedder.js';
import { WORD_VECTOR_DIMENSIONS } from '../../src/models/word-vector-file.js';
import { sharedWordVectors, type WordVectors } from '../../src/models/word-vectors.js';

const embedder = new HybridEmbedder();
const hashing = new HashingEmbedder();

async function similarity(a: string, b: string, model: HybridEmbedder | HashingEmbedder = embedder): Promise<number> {
  const [x, y] = await model.embed([a, b]);
  return cosine(x!, y!);
}

function norm(vector: Float32Array): number {
  return Math.hypot(...vector);
}

/** Three words with chosen vectors, the rest unknown: what a test can reason about exactly. */
function smallVectors(): WordVectors {
  const words = ['porto', 'lisbon', 'refund'];
  const values = new Float32Array(words.length * WORD_VECTOR_DIMENSIONS);
  values[0] = 1;
  values[WORD_VECTOR_DIMENSIONS] = 0.8;
  values[WORD_VECTOR_DIMENSIONS + 1] = 0.6;
  values[2 * WORD_VECTOR_DIMENSIONS + 2] = 1;
  return {
    size: words.length,
    values,
    rowOf: (word) => {
      const row = words.indexOf(word);
      return row === -1 ? undefined : row;
    },
    rowOfStem: (stem) => (stem === 'refund' ? 2 : undefined),
  };
}

describe('HybridEmbedder', () => {
  it('is the hybrid model: 384 lexical dimensions beside 100 of word vectors', () => {
    expect(embedder.model).toBe(HYBRID_MODEL);
    expect(HYBRID_MODEL).toBe('hybrid-sg100-v1');
    expect(embedder.dimensions).toBe(HYBRID_DIMENSIONS);
    expect(HYBRID_DIMENSIONS).toBe(484);
  });

  it('returns one unit vector per text, in order, for every kind of text', async () => {
    const texts = ['hello', 'Grüße aus München', '東京タワーの高さ', 'emoji 😀🎉 only', 'refund '.repeat(2_000), 'INV-20931', 'x'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) {
      expect(vector).toHaveLength(HYBRID_DIMENSIONS);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    const [alone] = await embedder.embed(['x']);
    expect(Array.from(vectors[6]!)).toEqual(Array.from(alone!));
  });

  it('gives the same text the same vector in any instance', async () => {
    const text = 'Order ord_1234 for jane.doe@example.com shipped on 3 May to our new flat.';
    const [first] = await embedder.embed([text]);
    const [second] = await new HybridEmbedder().embed([text]);
    expect(Array.from(second!)).toEqual(Array.from(first!));
  });

  it("embeds empty, blank and word-less text to one fixed unit vector: hashing's, padded", async () => {
    const [empty, blank, punctuation, word] = await embedder.embed(['', ' \n\t ', '?!…', 'hello']);
    for (const vector of [empty, blank, punctuation]) {
      expect(norm(vector!)).toBeCloseTo(1, 5);
      expect(Array.from(vector!)).toEqual(Array.from(empty!));
    }
    expect(Array.from(empty!.subarray(0, 384))).toEqual(Array.from(hashing.embedOne('')));
    expect(empty!.subarray(384).every((value) => value === 0)).toBe(true);
    expect(Math.abs(cosine(empty!, word!))).toBeLessThan(0.2);
  });

  it('finds paraphrases that share no word, where hashing did not', async () => {
    const moved = 'I moved to Porto.';
    const unrelated = 'Invoices are sent by e-mail at the end of each month.';
    const pairs: [string, string][] = [
      ['Where did I move?', moved],
      ['Which city do I live in now?', moved],
      ['How long until my money comes back?', 'Once approved, a refund reaches the original payment method within five working days.'],
      ['What vehicle do I own?', 'I drive a red Toyota Corolla.'],
    ];
    for (const [query, answer] of pairs) {
      const hybrid = await similarity(query, answer);
      expect(hybrid, query).toBeGreaterThan((await similarity(query, answer, hashing)) + 0.1);
      expect(hybrid, query).toBeGreaterThan((await similarity(query, unrelated)) + 0.1);
    }
  });

  it('keeps exact identifiers decisive', async () => {
    const query = 'details of invoice INV-20931';
    const exact = await similarity(query, 'Invoice INV-20931 was issued to Keller GmbH.');
    expect(exact).toBeGreaterThan((await similarity(query, 'Invoice INV-20932 was issued to Keller GmbH.')) + 0.1);
    expect(exact).toBeGreaterThan((await similarity(query, 'Invoices are issued to every customer of the shop.')) + 0.1);
  });

  it('looks a word up as written, by the parts of a compound, then by its stem, and ignores function words and numbers', async () => {
    const small = new HybridEmbedder({ wordVectors: () => Promise.resolve(smallVectors()) });
    const semantic = async (text: string) => Array.from((await small.embed([text]))[0]!.subarray(384));
    const porto = await semantic('Porto');
    expect(porto[0]).toBeGreaterThan(0.7);
    expect(porto.slice(1).every((value) => value === 0)).toBe(true);
    // Unknown words and numbers add nothing; neither do the words of STOP_WORDS.
    expect(await semantic('the Porto of 2024 zzyzx')).toEqual(porto);
    expect(await semantic('porto-lisbon')).toEqual(await semantic('Porto Lisbon'));
    expect(await semantic('refunded')).toEqual(await semantic('refund'));
    expect((await semantic('zzyzx 2024')).every((value) => value === 0)).toBe(true);
  });

  it('loads no word vectors to embed no texts', async () => {
    let asked = 0;
    const counting = new HybridEmbedder({
      wordVectors: () => {
        asked += 1;
        return sharedWordVectors();
      },
    });
    await expect(counting.embed([])).resolves.toEqual([]);
    expect(asked).toBe(0);
    await counting.embed(['one']);
    expect(asked).toBe(1);
  });
});
