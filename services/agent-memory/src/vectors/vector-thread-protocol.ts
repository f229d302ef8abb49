/**
 * What ThreadedVectorStore and its thread (vector-thread.ts) say to each other: the store's calls
 * one way, the vector source's and the logger's the other, each answered by id.
 */
import type { EmbeddedVectorStore, EmbeddedVectorStoreOptions } from './embedded-vector-store.js';
import type { VectorSource } from './vector-store.js';

/** The store's methods a thread answers as they are; `open` takes the source's shape instead of the source. */
export type ForwardedMethod = 'upsert' | 'search' | 'similarities' | 'delete' | 'deleteAgent' | 'close' | 'whenIndexed' | 'describeAgent' | 'stats' | 'heldAgents';

export interface ThreadCalls extends Pick<EmbeddedVectorStore, ForwardedMethod> {
  /** Opens the store on the main thread's source; `changedSince` says whether that source can tell. */
  open(source: { changedSince: boolean }): Promise<void>;
}

export type SourceMethod = keyof Required<VectorSource>;

/** The store's options as the thread is started with them: the logger stays on the main thread. */
export type ThreadOptions = Omit<EmbeddedVectorStoreOptions, 'logger'>;

export type ToThread =
  | { type: 'call'; id: number; method: keyof ThreadCalls; args: unknown[] }
  | { type: 'source-answer'; id: number; ok: true; value: unknown }
  | { type: 'source-answer'; id: number; ok: false; error: unknown };

export type FromThread =
  | { type: 'answer'; id: number; ok: true; value: unknown }
  | { type: 'answer'; id: number; ok: false; error: unknown }
  | { type: 'source'; id: number; method: SourceMethod; args: unknown[] }
  | { type: 'log'; level: 'info' | 'warn'; fields: Record<string, unknown>; message: string };

/** An error as it can cross a thread: a structured clone of it when it has one, else its message. */
export function transferableError(error: unknown): unknown {
  try {
    structuredClone(error);
    return error;
  } catch {
    return new Error(error instanceof Error ? error.message : String(error));
  }
}
