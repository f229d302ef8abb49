/** What the EmbeddedVectorStore test files share: stores over temporary directories, closed and removed after each test. */
import { access } from 'node:fs/promises';
import { afterEach } from 'vitest';
import { EmbeddedVectorStore, type EmbeddedVectorStoreOptions } from '../../src/vectors/embedded-vector-store.js';
import { type VectorRecord } from '../../src/vectors/vector-store.js';
import { type FakeDatabase, type Owner, recordingLogger, temporaryDirectory } from './vector-fixtures.js';

export const DIMENSIONS = 8;
export const MODEL = 'test-model';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs `cleanup` after the current test, the last registered first. */
export function afterThisTest(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

export async function directory(): Promise<string> {
  const made = await temporaryDirectory();
  cleanups.push(made.remove);
  return made.path;
}

export async function openStore(path: string | undefined, database: FakeDatabase, options: Partial<EmbeddedVectorStoreOptions> = {}) {
  const { logger, infos, warnings } = recordingLogger();
  const store = new EmbeddedVectorStore({ directory: path, dimensions: DIMENSIONS, model: MODEL, logger, ...options });
  await store.open(database);
  cleanups.push(() => store.close());
  return { store, infos, warnings };
}

/** Writes records to the database and the index, as the memory service does. */
export async function write(store: EmbeddedVectorStore, database: FakeDatabase, records: VectorRecord[]): Promise<void> {
  database.put(...records);
  await store.upsert(records);
}

export async function nearest(store: EmbeddedVectorStore, owner: Owner, vector: Float32Array, limit = 10): Promise<string[]> {
  return (await store.search({ ...owner, vector, limit })).map((hit) => hit.id);
}

/** The ids found for `userId`'s audience, best first. */
export async function nearestFor(store: EmbeddedVectorStore, owner: Owner, userId: string | null, vector: Float32Array, limit = 10): Promise<string[]> {
  return (await store.search({ ...owner, vector, limit, audience: { userId } })).map((hit) => hit.id);
}


export async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
