/**
 * The embedded store (EmbeddedVectorStore) on a thread of its own. usearch's searches are
 * synchronous: on the main thread a search over a 100k-vector graph held the event loop for
 * ~0.7 ms, a third of all the time the all-in-one platform spent on a memory search, and every
 * other request waited for it. On its own thread the graph works on the second core while the
 * main thread serves HTTP, gRPC and PostgreSQL. The store's contract is unchanged; only its
 * vectors cross the thread (copied, ~1.5 KB each).
 *
 * The source the store is rebuilt from stays on the main thread, which reads it for the thread.
 * A thread that dies (it ran out of memory, say) fails the calls it held and is started again on
 * the same source, from the files it saved; until it is open again, calls fail fast as
 * `service_unavailable` rather than wait.
 */
import { Worker } from 'node:worker_threads';
import { DomainError } from '@agent-platform/kit';
import { threadEntry } from '../thread-entry.js';
import { observeIndexStats, unobserveIndexStats, type VectorIndexStats } from './embedded-vector-store.js';
import { type FromThread, type SourceMethod, type ThreadCalls, type ThreadOptions, type ToThread, transferableError } from './vector-thread-protocol.js';
import type { AgentRef, SimilarityQuery, VectorHit, VectorQuery, VectorRecord, VectorSource, VectorStore, VectorStoreLogger } from './vector-store.js';

export interface ThreadedVectorStoreOptions extends ThreadOptions {
  /** The store's lines, and the thread's own failures. */
  logger?: VectorStoreLogger & { error(fields: object, message: string): void };
  /** Between attempts to open a restarted thread's store (its source, the database, may be down). */
  reopenDelayMs?: number;
}

type Answer = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

const REOPEN_DELAY_MS = 1_000;

export class ThreadedVectorStore implements VectorStore {
  readonly kind = 'embedded';
  private thread: Worker | undefined;
  private readonly answers = new Map<number, Answer>();
  private nextCall = 0;
  private source: VectorSource | undefined;
  /** The last error the source gave the thread: what a failed open really failed on. */
  private sourceFailure: unknown;
  private state: 'new' | 'opening' | 'open' | 'restarting' | 'closed' = 'new';
  private reopenTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ThreadedVectorStoreOptions) {}

  async open(source: VectorSource): Promise<void> {
    if (this.state !== 'new') throw new Error(`vector store cannot open: it is ${this.state}`);
    this.state = 'opening';
    this.source = source;
    try {
      await this.openThread();
    } catch (error) {
      this.state = 'new';
      throw error;
    }
    this.state = 'open';
    observeIndexStats(this);
  }

  upsert(records: readonly VectorRecord[]): Promise<void> {
    return this.call('upsert', records);
  }

  search(query: VectorQuery): Promise<VectorHit[]> {
    return this.call('search', query);
  }

  similarities(query: SimilarityQuery): Promise<VectorHit[]> {
    return this.call('similarities', query);
  }

  delete(ids: readonly string[]): Promise<void> {
    return this.call('delete', ids);
  }

  deleteAgent(tenantId: string, agentId: string): Promise<void> {
    return this.call('deleteAgent', tenantId, agentId);
  }

  /** Every agent the index holds vectors of. */
  heldAgents(): Promise<AgentRef[]> {
    return this.call('heldAgents');
  }

  /** Size and search mode of one agent's index, for tests, benches and diagnostics. */
  describeAgent(tenantId: string, agentId: string): Promise<{ vectors: number; searchMode: 'exact' | 'hnsw' } | undefined> {
    return this.call('describeAgent', tenantId, agentId);
  }

  /** Resolves once every HNSW graph under construction is complete. */
  whenIndexed(): Promise<void> {
    return this.call('whenIndexed');
  }

  stats(): Promise<VectorIndexStats> {
    return this.call('stats');
  }

  /** Saves what is unsaved (on the thread), then stops the thread. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    unobserveIndexStats(this);
    clearTimeout(this.reopenTimer);
    const thread = this.thread;
    this.thread = undefined;
    if (!thread) return;
    try {
      if (wasOpen) await this.send(thread, 'close', []);
    } finally {
      await thread.terminate();
      this.failAnswers(new Error('vector store is closed'));
    }
  }

  private call<M extends keyof ThreadCalls>(method: M, ...args: Parameters<ThreadCalls[M]>): Promise<Awaited<ReturnType<ThreadCalls[M]>>> {
    if (this.state === 'restarting') return Promise.reject(new DomainError('service_unavailable', 'The vector index is restarting; retry shortly.'));
    if (this.state !== 'open' || !this.thread) return Promise.reject(new Error(`vector store is ${this.state}, not open`));
    return this.send(this.thread, method, args) as Promise<Awaited<ReturnType<ThreadCalls[M]>>>;
  }

  private send(thread: Worker, method: keyof ThreadCalls, args: unknown[]): Promise<unknown> {
    const id = this.nextCall++;
    return new Promise((resolve, reject) => {
      this.answers.set(id, { resolve, reject });
      thread.postMessage({ type: 'call', id, method, args } satisfies ToThread);
    });
  }

  /** Starts a thread and opens its store on the source; a thread that cannot open is stopped. */
  private async openThread(): Promise<void> {
    const { logger: _logger, reopenDelayMs: _reopenDelayMs, ...threadOptions } = this.options;
    const entry = threadEntry('vector-thread', import.meta.url);
    const thread = new Worker(entry.url, { workerData: threadOptions satisfies ThreadOptions, ...(entry.execArgv === undefined ? {} : { execArgv: entry.execArgv }), name: 'vector-index' });
    thread.on('message', (message: FromThread) => this.receive(thread, message));
    thread.on('error', (error: Error) => this.options.logger?.error({ err: error }, 'vector index thread failed'));
    thread.on('exit', (code) => this.exited(thread, code));
    this.thread = thread;
    this.sourceFailure = undefined;
    try {
      await this.send(thread, 'open', [{ changedSince: this.source?.changedSince !== undefined }]);
    } catch (error) {
      this.thread = undefined;
      await thread.terminate();
      throw this.sourceFailure ?? error;
    }
  }

  private receive(thread: Worker, message: FromThread): void {
    switch (message.type) {
      case 'answer': {
        const answer = this.answers.get(message.id);
        this.answers.delete(message.id);
        if (message.ok) answer?.resolve(message.value);
        else answer?.reject(message.error);
        return;
      }
      case 'source':
        void this.readSource(thread, message.id, message.method, message.args);
        return;
      case 'log':
        this.options.logger?.[message.level](message.fields, message.message);
    }
  }

  private async readSource(thread: Worker, id: number, method: SourceMethod, args: unknown[]): Promise<void> {
    let answer: ToThread;
    try {
      answer = { type: 'source-answer', id, ok: true, value: await this.read(method, args) };
    } catch (error) {
      this.sourceFailure = error;
      answer = { type: 'source-answer', id, ok: false, error: transferableError(error) };
    }
    thread.postMessage(answer);
  }

  private read(method: SourceMethod, args: unknown[]): Promise<unknown> {
    const source = this.source;
    if (method === 'ids' && source) return source.ids();
    if (method === 'records' && source) return source.records(args[0] as string[]);
    if (method === 'changedSince' && source?.changedSince) return source.changedSince(args[0] as Date);
    return Promise.reject(new Error(`the vector source cannot answer ${method}`));
  }

  /** A thread stopped: expected when closing or after a failed open; else its calls fail and it is started again. */
  private exited(thread: Worker, code: number): void {
    if (this.thread !== thread) return;
    this.thread = undefined;
    this.failAnswers(new DomainError('service_unavailable', 'The vector index stopped; retry shortly.'));
    if (this.state !== 'open') return;
    this.options.logger?.error({ code }, 'vector index thread stopped; starting it again');
    this.state = 'restarting';
    this.reopen();
  }

  private failAnswers(error: Error): void {
    for (const answer of this.answers.values()) answer.reject(error);
    this.answers.clear();
  }

  private reopen(): void {
    this.openThread().then(
      () => {
        if (this.state !== 'restarting') return;
        this.state = 'open';
        this.options.logger?.info({}, 'vector index thread started again');
      },
      (error: unknown) => {
        if (this.state !== 'restarting') return;
        this.options.logger?.warn({ err: error }, 'vector index thread could not open its store; trying again');
        this.reopenTimer = setTimeout(() => this.reopen(), this.options.reopenDelayMs ?? REOPEN_DELAY_MS);
        this.reopenTimer.unref();
      },
    );
  }
}
