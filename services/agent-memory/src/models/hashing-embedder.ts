import { embedInSlices, normalised, type Embedder } from './embedder.js';

export const HASHING_MODEL = 'hashing';
export const HASHING_DEFAULT_DIMENSIONS = 384;

/**
 * Words and numbers, joined through `_ - . @ + '` so that ids (ord_1234, INV-20931), e-mail
 * addresses, versions (1.2.3) and contractions stay one token; a trailing full stop is not joined.
 */
const TOKEN = /[\p{L}\p{N}\p{M}]+(?:[_\-.@+'’][\p{L}\p{N}\p{M}]+)*/gu;
const JOINER = /[_\-.@+'’]+/u;
const DIGIT = /\p{N}/u;

/** English function words: kept (a query may be only those) but worth little. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for from had has have he her his i if in into is it its me my no not of on or our she so than that the their them then there these they this to was we were what when where which who why will with you your'.split(' '),
);

const WEIGHT = { word: 1, identifier: 2, stopWord: 0.2, part: 0.6, bigram: 0.5, trigrams: 1 } as const;
/** Only a long token's first characters give n-grams: hashes and base64 would cost much, match nothing. */
const MAX_NGRAM_TOKEN = 40;
/** What a text with no words embeds to; see `HashingEmbedder`. */
const EMPTY_FEATURE = '\u0000empty';
/**
 * Each feature lands in PROBES slots at 1/√PROBES of its weight: a collision with another text's
 * feature then shares only part of a feature, so an exact id match outweighs chance collisions.
 */
const PROBES = 2;
const PROBE_SEEDS = [0, 0x85ebca6b] as const;
const SIGN_SEEDS = [0x9e3779b9, 0x165667b1] as const;

/**
 * The built-in lexical embedder (decisions §6, when no EMBEDDING_* server is configured): feature
 * hashing of normalised words (identifier-like ones weigh double, function words little), the
 * parts of compound tokens, adjacent-word bigrams and character trigrams of words without digits
 * (fuzzy matching of inflections and typos). Each feature is hashed with FNV-1a to two signed
 * slots, counts are damped as 1 + ln(count), and the whole is L2-normalised. No randomness: the
 * same text gives the same vector in every process and on every platform.
 *
 * Empty, blank or word-less text (punctuation only) embeds to one fixed unit vector rather than
 * the zero vector, which has no cosine: such texts match each other fully and others hardly at all.
 */
export class HashingEmbedder implements Embedder {
  readonly model = HASHING_MODEL;
  readonly dimensions: number;

  constructor(options: { dimensions?: number } = {}) {
    const dimensions = options.dimensions ?? HASHING_DEFAULT_DIMENSIONS;
    if (!Number.isSafeInteger(dimensions) || dimensions < 8) {
      throw new RangeError(`dimensions must be an integer of at least 8, not ${dimensions}`);
    }
    this.dimensions = dimensions;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return embedInSlices(texts, (text) => this.embedOne(text), signal);
  }

  embedOne(text: string): Float32Array {
    const counts = features(text);
    if (counts.size === 0) counts.set(EMPTY_FEATURE, 1);
    const vector = new Float64Array(this.dimensions);
    for (const [feature, count] of counts) {
      const hash = fnv1a(feature);
      const value = damped(count) / Math.sqrt(PROBES);
      for (let probe = 0; probe < PROBES; probe += 1) {
        // FNV's low bits are weak (20931 and 20391 share them): slot and sign come from mixed hashes.
        const slot = mix(hash ^ PROBE_SEEDS[probe]!) % this.dimensions;
        const sign = mix(hash ^ SIGN_SEEDS[probe]!) >>> 31 ? 1 : -1;
        vector[slot]! += sign * value;
      }
    }
    // Colliding features can cancel exactly; the reserved feature then stands in, as for ''.
    return normalised(vector) ?? this.embedOne('');
  }
}

/** The lower-cased, NFKC-normalised word tokens of `text`, compound tokens kept whole. */
export function wordTokens(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(TOKEN) ?? [];
}

function features(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (feature: string, weight: number): void => {
    counts.set(feature, (counts.get(feature) ?? 0) + weight);
  };
  let previous: string | undefined;
  for (const token of wordTokens(text)) {
    const stop = STOP_WORDS.has(token);
    add(`w:${token}`, stop ? WEIGHT.stopWord : isIdentifier(token) ? WEIGHT.identifier : WEIGHT.word);
    const parts = token.split(JOINER).filter((part) => part.length > 0);
    if (parts.length > 1) for (const part of parts) add(`w:${part}`, STOP_WORDS.has(part) ? WEIGHT.stopWord : WEIGHT.part);
    if (stop) continue;
    if (previous !== undefined) add(`b:${previous} ${token}`, WEIGHT.bigram);
    previous = token;
    // Ids should match exactly: INV-20931 must not look like INV-20932.
    if (DIGIT.test(token)) continue;
    for (const part of parts) trigrams(part, add);
  }
  return counts;
}

/** INV-20931, ord_1234, a1b2c3: rare, specific, and what a user quotes to find one record. */
function isIdentifier(token: string): boolean {
  return token.length >= 4 && DIGIT.test(token);
}

function trigrams(word: string, add: (feature: string, weight: number) => void): void {
  const chars = Array.from(`#${word.slice(0, MAX_NGRAM_TOKEN)}#`);
  const count = chars.length - 2;
  if (count < 1) return;
  // Spread a fixed weight over the word's trigrams so long words do not outweigh their own token.
  const weight = WEIGHT.trigrams / Math.sqrt(count);
  for (let index = 0; index < count; index += 1) add(`c:${chars.slice(index, index + 3).join('')}`, weight);
}

/** Sublinear term frequency: a word said ten times is not ten times as relevant. */
function damped(count: number): number {
  return count <= 1 ? count : 1 + Math.log(count);
}

/** 32-bit FNV-1a over UTF-16 code units: fixed, fast, and the same everywhere. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    hash = Math.imul(hash ^ (unit & 0xff), 0x01000193);
    hash = Math.imul(hash ^ (unit >>> 8), 0x01000193);
  }
  return hash >>> 0;
}

/** murmur3's finaliser: every output bit depends on every input bit. */
function mix(hash: number): number {
  let h = hash;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
