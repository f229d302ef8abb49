/**
 * The vectors of one (tenant, agent): a query reaches no other agent's vectors because it never
 * searches any structure that holds them. Small indexes are searched exactly (usearch's SIMD brute
 * force), large ones through an HNSW graph built beside the dense rows once the agent has more than
 * `exactSearchMaxVectors` of them and dropped again below half that (so an agent hovering at the
 * boundary does not rebuild its graph on every write).
 *
 * While the graph is being filled (a new graph, a bulk load, a graph saved part-built), a search
 * asks the graph for what it holds and searches the rest exactly, as long as that rest is small;
 * otherwise it searches everything exactly and hands the build the time it took (HnswGraph.owe).
 *
 * Memory types and end users narrow a search through one mechanism: each row carries a partition
 * label (partition-labels.ts) and a search turns its filter into the set of labels it wants. A
 * set that holds few rows is gathered and searched exactly; a larger one goes through the graph,
 * asked for enough neighbours that the wanted rows among them still fill the limit.
 */
import { exactSearch, MetricKind } from 'usearch';
import { cosine } from '../models/embedder.js';
import { HnswGraph, type HnswParams } from './hnsw-graph.js';
import { type PartitionFilter, partitionLabel, wantedLabels } from './partition-labels.js';
import { VectorArena } from './vector-arena.js';
import { type VectorHit } from './vector-store.js';

export interface AgentIndexSettings {
  dimensions: number;
  exactSearchMaxVectors: number;
  hnsw: HnswParams;
  /** Told when the graph broke (usearch threw); the index then answers exactly and rebuilds it. */
  onGraphFailure: (agent: AgentVectorIndex, error: unknown) => void;
  /** Told when a background build emptied the graph's queue. */
  onGraphBuilt?: (agent: AgentVectorIndex, build: { inserted: number; ms: number }) => void;
}

export interface IndexedVector {
  id: string;
  memoryType: string;
  userId: string | null;
  /** Unit length, `dimensions` long. */
  vector: Float32Array;
}

/** HNSW results are over-fetched this much beyond what a label filter should leave. */
const FILTER_OVERFETCH = 1.5;

export class AgentVectorIndex {
  /** Writes since the rows were last saved; 0 when the file is current. */
  changesSinceSave = 0;
  /** When the saved rows were written; where reconciliation with `changedSince` starts. */
  savedAt: Date | undefined;
  private graphState: HnswGraph | undefined;
  private retiredFlag = false;

  constructor(
    readonly tenantId: string,
    readonly agentId: string,
    private readonly settings: AgentIndexSettings,
    readonly arena: VectorArena = new VectorArena(settings.dimensions),
  ) {}

  get size(): number {
    return this.arena.size;
  }

  /** The graph, when one exists (ready or still being filled). */
  get graph(): HnswGraph | undefined {
    return this.graphState;
  }

  /** `exact` while searches are brute force (small index, or graph still being filled). */
  get searchMode(): 'exact' | 'hnsw' {
    return this.graphState?.ready === true ? 'hnsw' : 'exact';
  }

  /** Whether the index was deleted or closed; nothing is saved for it any more. */
  get retired(): boolean {
    return this.retiredFlag;
  }

  upsert(items: readonly IndexedVector[]): void {
    const added: number[] = [];
    for (const item of items) {
      const label = partitionLabel(item.memoryType, item.userId);
      // What the index holds already (a replica applying its own write again from the feed) would only churn the graph.
      if (this.arena.holds(item.id, label, item.vector)) continue;
      const { key, replacedKey } = this.arena.put(item.id, label, item.vector);
      if (replacedKey !== undefined) this.graphState?.remove(replacedKey);
      added.push(key);
    }
    this.changesSinceSave += added.length;
    if (this.graphState) this.graphState.enqueue(added);
    this.fitGraph();
  }

  /** Removes the ids stored here; returns how many were. */
  remove(ids: Iterable<string>): number {
    let removed = 0;
    for (const id of ids) {
      const key = this.arena.remove(id);
      if (key === undefined) continue;
      this.graphState?.remove(key);
      removed += 1;
    }
    this.changesSinceSave += removed;
    this.fitGraph();
    return removed;
  }

  search(vector: Float32Array, limit: number, filter: PartitionFilter = {}): VectorHit[] {
    return this.searchMany([{ vector, limit, filter }])[0] ?? [];
  }

  /**
   * Several searches at once, answered in order. Those the complete graph answers go to it as
   * one batch (see HnswGraph.searchMany); the rest are answered one by one.
   */
  searchMany(queries: readonly SearchRequest[]): VectorHit[][] {
    const answers: VectorHit[][] = [];
    const throughGraph: { at: number; query: SearchRequest; route: GraphRoute }[] = [];
    queries.forEach((query, at) => {
      const route = this.route(query);
      if ('hits' in route) answers[at] = route.hits;
      else throughGraph.push({ at, query, route });
    });
    const graph = this.graphState;
    if (graph && throughGraph.length > 0) {
      const firstKeys = graph.searchMany(throughGraph.map(({ query, route }) => ({ vector: query.vector, k: route.k })));
      throughGraph.forEach(({ at, query, route }, index) => {
        answers[at] = this.approximate(graph, query.vector, query.limit, route.labels, route.matching, firstKeys[index]);
      });
    }
    return answers;
  }

  /** How one search is answered: right here, or through the complete graph (asking it for `k` first). */
  private route({ vector, limit, filter }: SearchRequest): { hits: VectorHit[] } | GraphRoute {
    const size = this.arena.size;
    if (size === 0 || limit < 1) return { hits: [] };
    const wanted = wantedLabels(this.arena.storedLabels(), filter);
    const matching = wanted ? this.arena.countOfLabels(wanted) : size;
    if (matching === 0) return { hits: [] };
    // A filter every stored item passes (all of the agent's types, an audience of an agent with no
    // end users' items) is no filter.
    const labels = matching === size ? undefined : wanted;
    this.fitGraph();
    const graph = this.graphState;
    // Few wanted rows (one end user's among many), or no more than are asked for (then every one of
    // them is the answer), are cheaper to gather than to dig out of the graph, and exact.
    if (!graph || matching <= this.settings.exactSearchMaxVectors || matching <= limit) return { hits: this.exact(vector, limit, labels) };
    if (graph.ready) return { labels, matching, k: firstAsk(size, limit, labels, matching) };
    if (graph.pendingCount <= this.settings.exactSearchMaxVectors) return { hits: this.whileBuilding(graph, vector, limit, labels, matching) };
    const started = performance.now();
    const hits = this.exact(vector, limit, labels);
    graph.owe(performance.now() - started);
    return { hits };
  }

  /** The cosine similarity of `vector` to each of `ids` stored here (the others are left out). */
  similarities(vector: Float32Array, ids: readonly string[]): VectorHit[] {
    const hits: VectorHit[] = [];
    for (const id of ids) {
      const stored = this.arena.vectorOfId(id);
      if (stored) hits.push({ id, score: clampScore(cosine(vector, stored)) });
    }
    return hits;
  }

  /** An empty graph over this index's rows, for `adoptGraph` once loaded. */
  createGraph(): HnswGraph {
    return new HnswGraph(
      this.settings.dimensions,
      this.settings.hnsw,
      (key) => this.arena.vectorOfKey(key),
      (build) => this.settings.onGraphBuilt?.(this, build),
    );
  }

  /** Adopts a graph loaded from a file, queueing what the file lacks and dropping what is gone. */
  adoptGraph(graph: HnswGraph, savedKeys: readonly number[]): void {
    this.graphState?.cancel();
    this.graphState = graph;
    const live = new Set(this.arena.liveKeys());
    for (const key of savedKeys) if (!live.has(key)) graph.remove(key);
    const saved = new Set(savedKeys);
    graph.enqueue([...live].filter((key) => !saved.has(key)));
  }

  /** Stops filling the graph for good (closing or deleting). */
  retire(): void {
    this.retiredFlag = true;
    this.dropGraph();
  }

  /** Builds the graph if the index is large enough for one, drops it if too small or broken. */
  fitGraph(): void {
    if (this.retiredFlag) return;
    const size = this.arena.size;
    const graph = this.graphState;
    if (graph?.failure !== undefined) {
      this.settings.onGraphFailure(this, graph.failure);
      this.dropGraph();
    }
    if (this.graphState && size < this.settings.exactSearchMaxVectors / 2) this.dropGraph();
    else if (!this.graphState && size > this.settings.exactSearchMaxVectors) {
      const fresh = this.createGraph();
      this.graphState = fresh;
      fresh.enqueue(this.arena.liveKeys());
    }
  }

  private dropGraph(): void {
    this.graphState?.cancel();
    this.graphState = undefined;
  }

  private exact(vector: Float32Array, limit: number, labels: ReadonlySet<string> | undefined): VectorHit[] {
    const { matrix, slots } = labels ? this.arena.gather(labels) : { matrix: this.arena.matrix(), slots: undefined };
    return this.exactAmong(matrix, slots, vector, limit);
  }

  /** The graph's answer merged with an exact search of what it does not hold yet. */
  private whileBuilding(graph: HnswGraph, vector: Float32Array, limit: number, labels: ReadonlySet<string> | undefined, matching: number): VectorHit[] {
    const pending = this.arena.gatherKeys(graph.pendingKeys(), labels);
    const found = [...this.approximate(graph, vector, limit, labels, matching), ...this.exactAmong(pending.matrix, pending.slots, vector, limit)];
    const seen = new Set<string>();
    return found
      .sort((a, b) => b.score - a.score)
      .filter((hit) => !seen.has(hit.id) && seen.add(hit.id))
      .slice(0, limit);
  }

  /** Exact search over `matrix`, whose row r is the arena's slot `slots[r]` (or r itself). */
  private exactAmong(matrix: Float32Array, slots: readonly number[] | undefined, vector: Float32Array, limit: number): VectorHit[] {
    const rows = matrix.length / this.settings.dimensions;
    const count = Math.min(limit, rows);
    if (count === 0) return [];
    const matches = exactSearch(matrix, vector, this.settings.dimensions, count, MetricKind.IP, 1);
    const hits: VectorHit[] = [];
    matches.keys.forEach((row, index) => {
      const slot = slots ? slots[Number(row)] : Number(row);
      const id = slot === undefined ? undefined : this.arena.idOfSlot(slot);
      // usearch's inner-product distance is 1 − dot.
      if (id !== undefined) hits.push({ id, score: clampScore(1 - (matches.distances[index] ?? 1)) });
    });
    return hits;
  }

  /** The graph's nearest, filtered and scored exactly; `firstKeys` is its answer to the first ask when already known. */
  private approximate(
    graph: HnswGraph,
    vector: Float32Array,
    limit: number,
    labels: ReadonlySet<string> | undefined,
    matching: number,
    firstKeys?: readonly number[],
  ): VectorHit[] {
    const size = this.arena.size;
    let k = firstAsk(size, limit, labels, matching);
    for (let keys = firstKeys ?? graph.search(vector, k); ; keys = graph.search(vector, k)) {
      const hits: VectorHit[] = [];
      for (const key of keys) {
        const id = this.arena.idOfKey(key);
        const stored = this.arena.vectorOfKey(key);
        if (id === undefined || stored === undefined || (labels && !labels.has(this.arena.labelOfKey(key) ?? ''))) continue;
        // Scored from the full-precision row: the graph keeps half-precision copies.
        hits.push({ id, score: clampScore(cosine(vector, stored)) });
      }
      hits.sort((a, b) => b.score - a.score);
      if (hits.length >= limit) return hits.slice(0, limit);
      // A graph still being filled holds fewer than `size`: asking it for more finds nothing new.
      if (k >= Math.min(size, graph.size)) {
        // Asked for everything, an HNSW graph may still not reach a node or two: fewer hits than the
        // filter leaves are made up exactly, as a search of one end user's items must find them all.
        return k >= size && hits.length < Math.min(limit, matching) ? this.exact(vector, limit, labels) : hits.slice(0, limit);
      }
      k = Math.min(size, k * 2);
    }
  }
}

/** One search of an agent's index: `limit` nearest to `vector`, narrowed by `filter`. */
export interface SearchRequest {
  vector: Float32Array;
  limit: number;
  filter: PartitionFilter;
}

interface GraphRoute {
  labels: ReadonlySet<string> | undefined;
  matching: number;
  k: number;
}

/** What to ask the graph for first: `limit`, or more when a label filter will drop some of it. */
function firstAsk(size: number, limit: number, labels: ReadonlySet<string> | undefined, matching: number): number {
  return Math.min(size, labels ? Math.ceil((limit * size * FILTER_OVERFETCH) / matching) : limit);
}

/** Float rounding can put the dot product of two unit vectors a hair outside [-1, 1]. */
function clampScore(score: number): number {
  return Math.max(-1, Math.min(1, score));
}
