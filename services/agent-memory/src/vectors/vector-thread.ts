/**
 * The thread ThreadedVectorStore starts: an EmbeddedVectorStore answering the main thread's calls,
 * reading its source and writing its log lines through the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EmbeddedVectorStore } from './embedded-vector-store.js';
import { type FromThread, type SourceMethod, type ThreadCalls, type ThreadOptions, type ToThread, transferableError } from './vector-thread-protocol.js';
import type { VectorSource } from './vector-store.js';

if (!parentPort) throw new Error('vector-thread.ts runs as a worker thread of ThreadedVectorStore');
const port = parentPort;
const post = (message: FromThread): void => port.postMessage(message);

const log =
  (level: 'info' | 'warn') =>
  (fields: object, message: string): void => {
    const err = 'err' in fields ? { err: transferableError(fields.err) } : {};
    post({ type: 'log', level, fields: { ...fields, ...err }, message });
  };
const store = new EmbeddedVectorStore({ ...(workerData as ThreadOptions), logger: { info: log('info'), warn: log('warn') } });

const sourceAnswers = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
let nextSourceCall = 0;
function askSource<T>(method: SourceMethod, ...args: unknown[]): Promise<T> {
  const id = nextSourceCall++;
  post({ type: 'source', id, method, args });
  return new Promise((resolve, reject) => sourceAnswers.set(id, { resolve: resolve as (value: unknown) => void, reject }));
}

/** The store's source, read on the main thread. */
function mainThreadSource({ changedSince }: { changedSince: boolean }): VectorSource {
  return {
    ids: () => askSource('ids'),
    records: (ids) => askSource('records', ids),
    ...(changedSince ? { changedSince: (since: Date) => askSource<string[]>('changedSince', since) } : {}),
  };
}

async function answer(id: number, method: keyof ThreadCalls, args: unknown[]): Promise<void> {
  try {
    const value =
      method === 'open' ? await store.open(mainThreadSource(args[0] as { changedSince: boolean })) : await (store[method] as (...values: unknown[]) => unknown).apply(store, args);
    post({ type: 'answer', id, ok: true, value });
  } catch (error) {
    post({ type: 'answer', id, ok: false, error: transferableError(error) });
  }
}

port.on('message', (message: ToThread) => {
  if (message.type === 'call') {
    void answer(message.id, message.method, message.args);
    return;
  }
  const waiting = sourceAnswers.get(message.id);
  sourceAnswers.delete(message.id);
  if (message.ok) waiting?.resolve(message.value);
  else waiting?.reject(message.error);
});
