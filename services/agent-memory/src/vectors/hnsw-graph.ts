/**
 * An HNSW graph (usearch) over one agent's vectors. usearch's calls are synchronous and native:
 * adding 10,000 vectors of 384 dimensions takes seconds, which would stall every request of the
 * process. So vectors are queued and added in time slices of `SLICE_MS`, yielding to the event
 * loop between slices; until the queue is empty the graph is not `ready` and the owner searches
 * what is still queued exactly (see AgentVectorIndex), which is slower but never wrong.
 *
 * Those slower searches are what would starve the build: under steady load every turn of the
 * event loop runs many of them and one 5 ms slice, and a 100k-vector graph was seen still
 * building after minutes. So the owner reports the time its fallback searches took (`owe`) and
 * the build takes as much again in longer slices: searches run at half speed for a while rather
 * than slowly for ever.
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

/**
 * How the graph stores its own copy of each vector. Half precision, measured on 2 cores at 100k
 * vectors of 384 dimensions (M 32, ef 256): search p50 3.04 → 2.38 ms on the bench's memory and
 * 0.59 → 0.39 ms on embedding-like data, build 60 → 46 s, recall@10 against exact search unchanged
 * (0.765 / 0.766 and 0.9997 / 0.9983), and half the memory. The owner scores what the graph
 * finds from the full-precision rows, so callers still see exact cosines. i8 was faster still but lost a quarter of the recall.
 */
export const GRAPH_QUANTIZATION = ScalarKind.F16;

/** Usual stretch, in ms, that inserting into the graph holds the event loop… */
const SLICE_MS = 5;
/** …and the longest, when it is repaying the time of fallback searches. */
const SLICE_MAX_MS = 50;
const CHUNK = 32;
/**
 * Threads usearch spreads a batch of searches over. One: it starts and joins a thread of its own
 * for each extra one on every call, and the store already runs on a thread of its own
 * (ThreadedVectorStore). Over 100k items at 50 connections (all-in-one, 2 cores, runs
 * alternating): two threads cost 2.5–3.0 ms of the platform's CPU per search, one 2.0–2.2 ms, on a
 * data directory that had run a while (376–472 searches a second became 497–572); on one just
 * stored, searches a second were the same within noise (422–461 against 420–528).
 */
const SEARCH_THREADS = 1;
/** A queue this short is inserted at once, so the graph stays ready under ordinary writes. */
const INLINE_ADD_MAX = 64;

export class HnswGraph {
  private readonly index: Index;
  private queue: number[] = [];
  private cursor = 0;
  private draining: Promise<void> | undefined;
  private cancelled = false;
  /** Time (ms) fallback searches took that the build has not yet been given back. */
  private owed = 0;
  private buildStarted = 0;
  private insertedInBuild = 0;
  /** Set when usearch threw; the owner drops the graph and falls back to exact search. */
  failure: unknown;
  /** Whether the graph differs from its last saved file. */
  changed = true;

  constructor(
    readonly dimensions: number,
    readonly params: HnswParams,
    /** The live vector of a key, or undefined once that key was replaced or removed. */
    private readonly vectorOf: (key: number) => Float32Array | undefined,
    /** Told each time a queue drained in the background is empty: how many vectors it added, in how long. */
    private readonly onBuilt?: (build: { inserted: number; ms: number }) => void,
  ) {
    this.index = new Index({
      dimensions,
      // Vectors are unit length, so inner product is cosine without the norm computations.
      metric: MetricKind.IP,
      quantization: GRAPH_QUANTIZATION,
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

  /** Keys queued and not yet in the graph (some may since have been replaced or removed). */
  pendingKeys(): number[] {
    return this.queue.slice(this.cursor);
  }

  get pendingCount(): number {
    return this.queue.length - this.cursor;
  }

  /** Hands the build the time (ms) a search spent on what the graph does not hold yet. */
  owe(ms: number): void {
    if (this.draining) this.owed += ms;
  }

  /** Of `keys`, those the graph holds: what a partly built graph is saved with. */
  heldKeys(keys: readonly number[]): number[] {
    return keys.filter((key) => this.contains(key));
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

  /** The keys of the `k` nearest vectors, best first by the graph's half-precision reckoning. */
  search(vector: Float32Array, k: number): number[] {
    const matches = this.index.search(vector, this.cappedK(k), SEARCH_THREADS);
    return Array.from(matches.keys, Number);
  }

  /** `search` for each of several vectors, answered in order; those asking for the same `k` go to usearch as one batch. */
  searchMany(asks: readonly { vector: Float32Array; k: number }[]): number[][] {
    const answers: number[][] = [];
    for (const [k, group] of Map.groupBy(asks.entries(), ([, ask]) => this.cappedK(ask.k))) {
      if (group.length === 1) {
        const [at, ask] = group[0]!;
        answers[at] = this.search(ask.vector, k);
        continue;
      }
      const matches = this.index.search(
        group.map(([, ask]) => ask.vector),
        k,
        SEARCH_THREADS,
      );
      group.forEach(([at], index) => {
        const count = Number(matches.counts[index] ?? 0);
        answers[at] = Array.from(matches.keys.subarray(index * k, index * k + count), Number);
      });
    }
    return answers;
  }

  private cappedK(k: number): number {
    return Math.min(k, Math.max(1, this.index.size()));
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
    this.buildStarted = performance.now();
    this.insertedInBuild = 0;
    while (!this.cancelled && this.failure === undefined && this.cursor < this.queue.length) {
      const repaid = Math.min(this.owed, SLICE_MAX_MS - SLICE_MS);
      this.owed -= repaid;
      this.insertNext(performance.now() + SLICE_MS + repaid);
      await nextTurn();
    }
    this.owed = 0;
    this.compactQueue();
    if (this.ready) this.onBuilt?.({ inserted: this.insertedInBuild, ms: performance.now() - this.buildStarted });
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
        this.insertedInBuild += keys.length;
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
