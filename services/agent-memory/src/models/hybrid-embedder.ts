import { stemmer } from 'stemmer';
import { embedInSlices, normalised, type Embedder } from './embedder.js';
import { HASHING_DEFAULT_DIMENSIONS, HASHING_MODEL, HashingEmbedder, STOP_WORDS, wordTokens } from './hashing-embedder.js';
import { WORD_VECTOR_DIMENSIONS } from './word-vector-file.js';
import { sharedWordVectors, type WordVectors } from './word-vectors.js';

export const HYBRID_MODEL = 'hybrid-sg100-v1';
export const HYBRID_DIMENSIONS = HASHING_DEFAULT_DIMENSIONS + WORD_VECTOR_DIMENSIONS;

/**
 * Share of the cosine the word vectors carry: cos = 0.4·lexical + 0.6·semantic. On the paraphrase
 * and lexical sets (test/fixtures) 0.5–0.7 were within a query of each other; less lost
 * paraphrases, more lost the lexical set's first hits.
 */
const SEMANTIC_SHARE = 0.6;
/**
 * Smooth inverse frequency (Arora et al., 2017): a word of frequency rank r weighs r / (r + 300),
 * SIF's a/(a + p(w)) with a ≈ 2.5e-4 and p(w) from Zipf's law, so "take" or "still" count for
 * little beside "refund" without a list of them.
 */
const SIF_RANK = 300;
const DIGIT = /\p{N}/u;
const JOINER = /[_\-.@+'’]+/u;
const LEXICAL_WEIGHT = Math.sqrt(1 - SEMANTIC_SHARE);
const SEMANTIC_WEIGHT = Math.sqrt(SEMANTIC_SHARE);

/**
 * The built-in offline embedder (decisions §6): the `hashing` embedder's lexical vector (384
 * dimensions: words, ids, bigrams, trigrams) beside a semantic one (100 dimensions): the SIF-
 * weighted mean of the text's GloVe word vectors (see `WordVectors`), so "Where did I move?" meets
 * "I moved to Porto." and "How long until my money comes back?" meets the refund policy. Each part
 * is unit length and weighted so that the whole is too and its cosine is 0.4·lexical +
 * 0.6·semantic. Ids and rare words keep their pull: they are the lexical part's heaviest features,
 * have no word vector to dilute, and search's ranking counts the query words an item holds besides.
 *
 * A word is looked up as written (lower-cased), then, for compounds (e-mail, sign-in), by its parts,
 * then by its Porter stem (the most frequent word of the same stem: refunded → refund). Function
 * words and tokens with digits (ids, amounts) are left to the lexical part. A text with no known
 * word is its lexical vector alone; empty text embeds to the one fixed vector `hashing` gives it.
 *
 * The word vectors load at the first embed, once per process (see `sharedWordVectors`).
 * Deterministic: the same text gives the same vector in every process.
 */
export class HybridEmbedder implements Embedder {
  readonly model = HYBRID_MODEL;
  readonly dimensions = HYBRID_DIMENSIONS;
  /** The default offline embedder before it: what it stored is re-embedded with this one. */
  readonly supersedes = [HASHING_MODEL];
  private readonly lexical = new HashingEmbedder({ dimensions: HASHING_DEFAULT_DIMENSIONS });
  private readonly wordVectors: () => Promise<WordVectors>;

  /** `wordVectors`: where the vectors come from (tests give small ones); default the bundled file's. */
  constructor(options: { wordVectors?: () => Promise<WordVectors> } = {}) {
    this.wordVectors = options.wordVectors ?? sharedWordVectors;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const words = await this.wordVectors();
    signal?.throwIfAborted();
    return embedInSlices(texts, (text) => this.embedOne(text, words), signal);
  }

  embedOne(text: string, words: WordVectors): Float32Array {
    const lexical = this.lexical.embedOne(text);
    const semantic = semanticVector(wordTokens(text), words);
    if (!semantic) {
      const vector = new Float32Array(this.dimensions);
      vector.set(lexical);
      return vector;
    }
    const vector = new Float64Array(this.dimensions);
    for (let index = 0; index < lexical.length; index += 1) vector[index] = LEXICAL_WEIGHT * lexical[index]!;
    for (let index = 0; index < WORD_VECTOR_DIMENSIONS; index += 1) vector[lexical.length + index] = SEMANTIC_WEIGHT * semantic[index]!;
    // Unit already, up to rounding; normalised so float32 sums to 1 as the port promises.
    return normalised(vector)!;
  }
}

/** The unit SIF-weighted sum of the tokens' word vectors; undefined when none is known. */
function semanticVector(tokens: readonly string[], words: WordVectors): Float32Array | undefined {
  const sum = new Float64Array(WORD_VECTOR_DIMENSIONS);
  let found = false;
  const add = (word: string): boolean => {
    const row = words.rowOf(word) ?? words.rowOfStem(stemmer(word));
    if (row === undefined) return false;
    const rank = row + 1;
    const weight = rank / (rank + SIF_RANK);
    const base = row * WORD_VECTOR_DIMENSIONS;
    for (let index = 0; index < WORD_VECTOR_DIMENSIONS; index += 1) sum[index]! += weight * words.values[base + index]!;
    found = true;
    return true;
  };
  for (const token of tokens) {
    if (STOP_WORDS.has(token) || DIGIT.test(token)) continue;
    if (words.rowOf(token) !== undefined || !JOINER.test(token)) {
      add(token);
      continue;
    }
    for (const part of token.split(JOINER)) if (part.length > 1 && !STOP_WORDS.has(part)) add(part);
  }
  return found ? normalised(sum) : undefined;
}
