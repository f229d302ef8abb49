/**
 * An HNSW graph (usearch) over one agent's vectors. usearch's calls are synchronous and native:
 * adding 10,000 vectors of 384 dimensions takes seconds, which would stall every request of the
 * process. So vectors are queued and added in time slices of `SLICE_MS`, yielding to the event
 * loop between slices; until the queue is empty the graph is not `ready` and the owner answers
 * with exact search instead, which is slower but never wrong.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Index, MetricKind, ScalarKind } from 'usearch';

export interface HnswParams {
  /** Neighbours per node (usearch `connectivity`, HNSW's M). */
  connectivity: number;
  /** Candidate list while inserting (`expansion_add`, efConstruction). */
  expansionAdd: number;
  /** Candidate list while searching (`expansion_search`, ef); at least `k` is used anyway. */
  expansionSearch: number;
}

/**
 * Chosen on 384 dimensions, 2 cores (test/bench/vector-index.ts and the recall test): M=16
 * plateaus near 0.90 recall@10 on uniformly random vectors whatever ef, so M=32. With random
 * queries over 5k random vectors, ef=192 reaches 0.978 and ef=256 0.997, so 256; on
 * embedding-like data at 100k vectors it still answers in p95 ≈ 2.5 ms, inside a 5 ms budget.
 */
export const DEFAULT_HNSW_PARAMS: HnswParams = { connectivity: 32, expansionAdd: 128, expansionSearch: 256 };

/** Longest stretch, in ms, that inserting into the graph holds the event loop. */
const SLICE_MS = 5;
const CHUNK = 32;
/** A queue this short is inserted at once, so the graph stays ready under ordinary writes. */
const INLINE_ADD_MAX = 64;

export class HnswGraph {
  private readonly index: Index;
  private queue: number[] = [];
  private cursor = 0;
  private draining: Promise<void> | undefined;
  private cancelled = false;
  /** Set when usearch threw; the owner drops the graph and falls back to exact search. */
  failure: unknown;
  /** Whether the graph differs from its last saved file. */
  changed = true;

  constructor(
    readonly dimensions: number,
    readonly params: HnswParams,
    /** The live vector of a key, or undefined once that key was replaced or removed. */
    private readonly vectorOf: (key: number) => Float32Array | undefined,
  ) {
    this.index = new Index({
      dimensions,
      // Vectors are unit length, so inner product is cosine without the norm computations.
      metric: MetricKind.IP,
      quantization: ScalarKind.F32,
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: params.expansionSearch,
      multi: false,
    });
  }

  get ready(): boolean {
    return !this.cancelled && this.failure === undefined && this.cursor >= this.queue.length;
  }

  get size(): number {
    return this.index.size();
  }

  /** Queues vectors for insertion; short queues are inserted before this returns. */
  enqueue(keys: readonly number[]): void {
    if (this.cancelled || this.failure !== undefined) return;
    for (const key of keys) this.queue.push(key);
    if (this.draining) return;
    if (this.queue.length - this.cursor <= INLINE_ADD_MAX) {
      this.insertNext(Number.POSITIVE_INFINITY);
      this.compactQueue();
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  remove(key: number): void {
    if (this.cancelled || this.failure !== undefined) return;
    const bigKey = BigInt(key);
    try {
      // Keys still queued are skipped when their turn comes: vectorOf no longer knows them.
      if (this.index.contains(bigKey)) {
        this.index.remove(bigKey);
        this.changed = true;
      }
    } catch (error) {
      this.failure = error;
    }
  }

  contains(key: number): boolean {
    return this.index.contains(BigInt(key)) === true;
  }

  /** The `k` nearest keys with their cosine similarity, best first. */
  search(vector: Float32Array, k: number): { keys: number[]; scores: number[] } {
    const matches = this.index.search(vector, Math.min(k, Math.max(1, this.index.size())), 1);
    const keys = Array.from(matches.keys, Number);
    // usearch's inner-product distance is 1 − dot.
    const scores = Array.from(matches.distances, (distance) => 1 - distance);
    return { keys, scores };
  }

  /** Resolves once every queued vector is in the graph (or insertion stopped). */
  async whenReady(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops insertion; the graph is never used again. */
  cancel(): void {
    this.cancelled = true;
  }

  save(path: string): void {
    this.index.save(path);
    this.changed = false;
  }

  /** Loads a graph file whose checksum the caller has verified; false when it does not fit. */
  load(path: string, expectedSize: number): boolean {
    this.index.load(path);
    this.changed = false;
    return this.index.dimensions() === this.dimensions && this.index.size() === expectedSize;
  }

  private async drain(): Promise<void> {
    while (!this.cancelled && this.failure === undefined && this.cursor < this.queue.length) {
      this.insertNext(performance.now() + SLICE_MS);
      await nextTurn();
    }
    this.compactQueue();
  }

  /** Inserts queued vectors in chunks until the queue is empty or `deadline` (ms) passed. */
  private insertNext(deadline: number): void {
    try {
      do {
        const keys: bigint[] = [];
        const rows: Float32Array[] = [];
        while (this.cursor < this.queue.length && keys.length < CHUNK) {
          const key = this.queue[this.cursor] ?? 0;
          this.cursor += 1;
          const vector = this.vectorOf(key);
          if (vector) {
            keys.push(BigInt(key));
            rows.push(vector);
          }
        }
        if (keys.length === 0) continue;
        const matrix = new Float32Array(rows.length * this.dimensions);
        rows.forEach((row, index) => matrix.set(row, index * this.dimensions));
        this.index.add(BigUint64Array.from(keys), matrix, 0);
        this.changed = true;
      } while (this.cursor < this.queue.length && performance.now() < deadline);
    } catch (error) {
      this.failure = error;
    }
  }

  private compactQueue(): void {
    if (this.cursor < this.queue.length) return;
    this.queue = [];
    this.cursor = 0;
  }
}
