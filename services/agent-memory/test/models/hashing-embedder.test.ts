import { describe, expect, it } from 'vitest';
import { cosine } from '../../src/models/embedder.js';
import { HASHING_DEFAULT_DIMENSIONS, HashingEmbedder, wordTokens } from '../../src/models/hashing-embedder.js';

const embedder = new HashingEmbedder();

async function similarity(a: string, b: string): Promise<number> {
  const [x, y] = await embedder.embed([a, b]);
  if (!x || !y) throw new Error('missing vector');
  return cosine(x, y);
}

function norm(vector: Float32Array): number {
  return Math.hypot(...vector);
}

describe('HashingEmbedder', () => {
  it('is the 384-dimension hashing model unless told otherwise', async () => {
    expect(embedder.model).toBe('hashing');
    expect(embedder.dimensions).toBe(HASHING_DEFAULT_DIMENSIONS);
    expect(HASHING_DEFAULT_DIMENSIONS).toBe(384);
    const small = new HashingEmbedder({ dimensions: 64 });
    const [vector] = await small.embed(['hello']);
    expect(vector).toHaveLength(64);
    expect(() => new HashingEmbedder({ dimensions: 0 })).toThrow(RangeError);
  });

  it('gives the same text the same vector, in any instance', async () => {
    const text = 'Order ord_1234 for jane.doe@example.com shipped on 3 May.';
    const [first] = await embedder.embed([text]);
    const [second] = await new HashingEmbedder().embed([text]);
    expect(Array.from(second ?? [])).toEqual(Array.from(first ?? []));
  });

  it('computes exactly the vectors it always has (stored vectors stay valid)', () => {
    // A change here means every stored `hashing` vector must be re-embedded: change it on purpose only.
    const vector = embedder.embedOne('Invoice INV-20931 was paid');
    const nonZero = [...vector.entries()].filter(([, value]) => value !== 0);
    expect(nonZero).toHaveLength(36);
    expect(nonZero[0]?.[0]).toBe(7);
    expect(nonZero[0]?.[1]).toBeCloseTo(0.1243108, 6);
    expect(nonZero[1]?.[0]).toBe(59);
    expect(nonZero[1]?.[1]).toBeCloseTo(0.420953, 6);
    expect(Array.from(vector).reduce((sum, value, index) => sum + value * (index + 1), 0)).toBeCloseTo(89.0527, 3);
  });

  it('returns unit vectors for every kind of text, one per input and in order', async () => {
    const texts = ['hello', 'Grüße aus München', '東京タワーの高さ', 'emoji 😀🎉 only', 'a'.repeat(10_000), 'x'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) expect(norm(vector)).toBeCloseTo(1, 5);
    expect(Array.from(vectors[5] ?? [])).toEqual(Array.from(embedder.embedOne('x')));
  });

  it('embeds empty, blank and word-less text to one fixed unit vector', async () => {
    const [empty, blank, punctuation, word] = await embedder.embed(['', ' \n\t ', '?!…', 'hello']);
    for (const vector of [empty, blank, punctuation]) {
      expect(vector && norm(vector)).toBeCloseTo(1, 5);
      expect(Array.from(vector ?? [])).toEqual(Array.from(empty ?? []));
    }
    expect(Math.abs(cosine(empty ?? new Float32Array(), word ?? new Float32Array()))).toBeLessThan(0.2);
  });

  it('puts similar texts closer than unrelated ones', async () => {
    const cat = 'The cat sat on the mat';
    expect(await similarity(cat, 'A cat was sitting on the mat')).toBeGreaterThan((await similarity(cat, 'Quarterly revenue grew by 12 percent')) + 0.3);
    const refunds = 'refund policy for damaged items';
    expect(await similarity(refunds, 'Our refunds policies cover damaged item returns')).toBeGreaterThan(
      (await similarity(refunds, 'The weather in Lisbon is sunny today')) + 0.15,
    );
  });

  it('matches inflections and typos through character trigrams', async () => {
    expect(await similarity('shipping', 'shiping')).toBeGreaterThan(0.3);
    expect(await similarity('shipping', 'shipped')).toBeGreaterThan(0.2);
    expect(Math.abs(await similarity('shipping', 'invoice'))).toBeLessThan(0.1);
    const notes = [
      'Our refund policy covers damaged items for 30 days.',
      'Shipping to Portugal takes three business days.',
      'Invoices are sent by e-mail at the end of each month.',
      'Passwords must be rotated every ninety days.',
    ];
    const vectors = await embedder.embed(notes);
    const [query] = await embedder.embed(['when does my shiping arrive']);
    const scores = vectors.map((vector) => cosine(query ?? new Float32Array(), vector));
    expect(scores.indexOf(Math.max(...scores))).toBe(1);
  });

  it('finds the one document that carries an exact id among near-identical ids', async () => {
    const documents = [
      'Invoice INV-20932 for Globex was paid on 4 March.',
      'Invoice INV-20391 for Initech is overdue.',
      'Invoice INV-20931 for ACME Corp was paid on 3 March after a reminder.',
      'Invoice INV-29031 is disputed by Umbrella; the amount is wrong.',
      'Invoice INV-21931 is overdue.',
      'Our refund policy covers damaged items for 30 days.',
    ];
    const vectors = await embedder.embed(documents);
    for (const query of ['What happened with invoice INV-20931?', 'inv-20931', 'status of INV-20931 please']) {
      const [queryVector] = await embedder.embed([query]);
      const scores = vectors.map((vector) => cosine(queryVector ?? new Float32Array(), vector));
      const best = scores.indexOf(Math.max(...scores));
      expect(documents[best], query).toContain('INV-20931');
    }
  });

  it('keeps ids, e-mail addresses and versions whole, lower-cased', () => {
    expect(wordTokens("Mail John.Doe+x@Example.com about ord_1234, INV-20931 and v1.2.3. Don't wait.")).toEqual([
      'mail',
      'john.doe+x@example.com',
      'about',
      'ord_1234',
      'inv-20931',
      'and',
      'v1.2.3',
      "don't",
      'wait',
    ]);
    expect(wordTokens('Straße ΣΊΣΥΦΟΣ 東京 ＡＢＣ')).toEqual(['straße', 'σίσυφος', '東京', 'abc']);
  });

  it('rejects when the caller has already gone', async () => {
    await expect(embedder.embed(['hello'], AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });
});
