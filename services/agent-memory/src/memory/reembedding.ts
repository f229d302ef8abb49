import { setTimeout as delay } from 'node:timers/promises';
import { settlesWithin, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { Embedder } from '../models/embedder.js';
import type { VectorStore } from '../vectors/vector-store.js';
import { embeddedText } from './embedded-text.js';
import type { ReembeddingRepository } from './reembedding.repository.js';

export interface ReembeddingOptions {
  em: EntityManager;
  items: ReembeddingRepository;
  embedder: Embedder;
  vectors: VectorStore;
  /** Runs a batch in a database context of its own. */
  inContext: <T>(work: () => Promise<T>) => Promise<T>;
  /** Items re-embedded in one transaction (their rows stay locked for its length). */
  batchSize: number;
  /** How long to wait before looking again when the items left are locked by other replicas, or a batch failed. */
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * Re-embeds, in the background, the items stored under the models the current embedder
 * supersedes (issue 43: `hashing` items once the hybrid embedder is the default), batch by batch:
 * each batch is claimed, embedded, written and put in this replica's index in one transaction, so
 * an item is moved whole or not at all, and replicas share the work without doing any twice (see
 * `ReembeddingRepository`). Other replicas' indexes learn of each batch through the vector feed.
 *
 * Until this replica sees none left, `models` names them, and search finds those items by their
 * words, scored with a vector made from their embedded text on the spot (memory.service.ts): an
 * item is found meanwhile as it will be once re-embedded, except by meaning alone.
 *
 * Items written with a superseded model after it finished (a replica of the previous release, in
 * a rolling upgrade) are re-embedded at the next start.
 */
export class Reembedding {
  private readonly options: ReembeddingOptions;
  private readonly superseded: readonly string[];
  private left: boolean;
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  /** This replica's pass over the primary key: the last id it claimed. */
  private after = '';

  constructor(options: ReembeddingOptions) {
    this.options = options;
    this.superseded = (options.embedder.supersedes ?? []).filter((model) => model !== options.embedder.model);
    this.left = this.superseded.length > 0;
  }

  /** The superseded models while items of them may be left (empty once this replica found none). */
  get models(): readonly string[] {
    return this.left ? this.superseded : [];
  }

  start(): void {
    if (!this.left || this.running) return;
    this.running = this.run().catch((error: unknown) => this.options.logger.error({ err: error }, 're-embedding stopped'));
  }

  /** Ends the batch in flight (its transaction rolls back if it cannot finish) within `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.stopping.abort();
    if (this.running && !(await settlesWithin(this.running, graceMs))) this.options.logger.warn({ grace_ms: graceMs }, 're-embedding did not stop within the grace');
  }

  private async run(): Promise<void> {
    const { items, inContext, logger, embedder } = this.options;
    const started = performance.now();
    const total = await inContext(() => items.countLeft(this.superseded));
    if (total === 0) {
      // The usual start: nothing to walk the primary key for.
      this.left = false;
      return;
    }
    logger.info({ items: total, from: this.superseded, to: embedder.model }, 're-embedding items stored under superseded models');
    let moved = 0;
    while (!this.stopping.signal.aborted) {
      let batch: number;
      try {
        batch = await inContext(() => this.batch());
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        logger.warn({ err: error }, 'a re-embedding batch failed; trying again');
        await this.pause();
        continue;
      }
      moved += batch;
      if (batch > 0) continue;
      // The end of this pass: a new one from the start takes what was locked the first time.
      if (this.after !== '') {
        this.after = '';
        continue;
      }
      if (!(await inContext(() => items.anyLeft(this.superseded)))) {
        this.left = false;
        logger.info({ items: moved, ms: Math.round(performance.now() - started), to: embedder.model }, 're-embedding done: no item of a superseded model is left');
        return;
      }
      // What is left is locked by other replicas' batches (or callers' changes): look again soon.
      await this.pause();
    }
  }

  /** One batch in one transaction; answers how many items it moved. */
  private batch(): Promise<number> {
    const { em, items, embedder, vectors, batchSize } = this.options;
    return em.transactional(async () => {
      const claimed = await items.claim(this.superseded, this.after, batchSize);
      if (claimed.length === 0) return 0;
      const embeddings = await embedder.embed(claimed.map(embeddedText), this.stopping.signal);
      await items.store(
        claimed.map((item, index) => ({ id: item.id, embedding: embeddings[index]! })),
        embedder.model,
      );
      // Inside the transaction: an index that cannot take the vectors leaves the items as they were.
      await vectors.upsert(claimed.map((item, index) => ({ id: item.id, tenantId: item.tenantId, agentId: item.agentId, memoryType: item.memoryType, userId: item.userId, vector: embeddings[index]! })));
      this.after = claimed.at(-1)!.id;
      return claimed.length;
    });
  }

  private async pause(): Promise<void> {
    await delay(this.options.pollIntervalMs, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}
