/**
 * What the thread adds to the embedded store (its contract runs in vector-store.contract.test.ts):
 * the source read across the thread, log lines brought back, and a thread that dies.
 */
import type { Worker } from 'node:worker_threads';
import { DomainError } from '@agent-platform/kit';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadedVectorStore } from '../../src/vectors/threaded-vector-store.js';
import { FakeDatabase, mix, newOwner, record } from './vector-fixtures.js';

const DIMENSIONS = 8;
const stores: ThreadedVectorStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/** A logger that keeps every message and resolves `said(message)` once that message was logged. */
function watchingLogger() {
  const lines: { level: string; message: string }[] = [];
  const waiting: { message: string; resolve: () => void }[] = [];
  const log = (level: string) => (_fields: object, message: string) => {
    lines.push({ level, message });
    for (const waiter of waiting.filter((entry) => entry.message === message)) waiter.resolve();
  };
  const said = (message: string): Promise<void> =>
    lines.some((line) => line.message === message) ? Promise.resolve() : new Promise((resolve) => waiting.push({ message, resolve }));
  return { logger: { info: log('info'), warn: log('warn'), error: log('error') }, lines, said };
}

function threadOf(store: ThreadedVectorStore): Worker {
  return (store as unknown as { thread: Worker }).thread;
}

describe('ThreadedVectorStore', () => {
  it('brings the thread’s log lines back to the main thread’s logger', async () => {
    const { logger, said } = watchingLogger();
    const store = new ThreadedVectorStore({ directory: undefined, dimensions: DIMENSIONS, model: 'threaded', logger });
    stores.push(store);
    await store.open(new FakeDatabase());
    await said('vector index open');
  });

  it('fails the calls of a thread that died with service_unavailable, then answers again from its source', async () => {
    const owner = newOwner();
    const database = new FakeDatabase();
    const near = record(owner, mix(DIMENSIONS, [0]));
    database.put(near, record(owner, mix(DIMENSIONS, [1])), record(owner, mix(DIMENSIONS, [2])));
    const { logger, lines, said } = watchingLogger();
    const store = new ThreadedVectorStore({ directory: undefined, dimensions: DIMENSIONS, model: 'threaded', logger, reopenDelayMs: 10 });
    stores.push(store);
    await store.open(database);
    const query = { ...owner, vector: mix(DIMENSIONS, [0, 1], [1, 0.1]), limit: 1 };
    expect((await store.search(query)).map((hit) => hit.id)).toEqual([near.id]);

    await threadOf(store).terminate();
    const whileRestarting = await store.search(query).catch((error: unknown) => error);
    expect(whileRestarting).toBeInstanceOf(DomainError);
    expect((whileRestarting as DomainError).code).toBe('service_unavailable');

    await said('vector index thread started again');
    expect((await store.search(query)).map((hit) => hit.id)).toEqual([near.id]);
    expect(lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual(['vector index thread stopped; starting it again']);
  });

  it('fails an open on the source’s own error when the source fails, and can open again', async () => {
    const database = new FakeDatabase();
    const owner = newOwner();
    const only = record(owner, mix(DIMENSIONS, [3]));
    database.put(only);
    const down = new DomainError('service_unavailable', 'The database is unavailable; retry shortly.');
    let reachable = false;
    const source = { ids: () => (reachable ? database.ids() : Promise.reject(down)), records: (ids: readonly string[]) => database.records(ids) };
    const store = new ThreadedVectorStore({ directory: undefined, dimensions: DIMENSIONS, model: 'threaded' });
    stores.push(store);

    await expect(store.open(source)).rejects.toBe(down);
    reachable = true;
    await store.open(source);
    expect((await store.search({ ...owner, vector: mix(DIMENSIONS, [3]), limit: 5 })).map((hit) => hit.id)).toEqual([only.id]);
  });
});
