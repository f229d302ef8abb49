/**
 * The in-process VectorStore, on usearch. Each (tenant, agent) has its own index (see
 * AgentVectorIndex), so a search can only ever see that agent's vectors; within it, memory types
 * and end users are told apart by each row's partition label. With a `directory` the
 * indexes are saved there (see IndexPersistence) and reloaded at open; without one they live in
 * memory and are refilled from the source at every open.
 *
 * Reconciliation at open: files that are missing, damaged or of another model or dimension are
 * dropped with one warning line; then the ids of `source` decide. Ids the files hold but the
 * source lacks are removed, ids the source has but the files lack are fetched, and, when the
 * source can tell (`changedSince`), ids re-embedded since the files were saved are fetched again.
 */
import { metrics } from '@opentelemetry/api';
import { AgentVectorIndex, type IndexedVector, type SearchRequest } from './agent-vector-index.js';
import { DEFAULT_HNSW_PARAMS, type HnswParams } from './hnsw-graph.js';
import { describeError } from './index-directory.js';
import { IndexPersistence } from './index-persistence.js';
import { type VectorArena } from './vector-arena.js';
import {
  type AgentRef,
  fetchInBatches,
  type SimilarityQuery,
  type VectorHit,
  type VectorQuery,
  type VectorRecord,
  type VectorSource,
  type VectorStore,
  type VectorStoreLogger,
  unitVector,
} from './vector-store.js';

export interface EmbeddedVectorStoreOptions {
  /** Where indexes are saved; undefined keeps them in memory only. */
  directory: string | undefined;
  dimensions: number;
  model: string;
  logger?: VectorStoreLogger;
  /**
   * Agents with at most this many vectors are searched by brute force. Measured on 2 cores at 384
   * dimensions, usearch's exact search beat its HNSW search (M=32, ef=256) up to about 10k
   * vectors of clustered data and still at 16k of uniformly random data.
   */
  exactSearchMaxVectors?: number;
  hnsw?: Partial<HnswParams>;
  /** An agent's rows are saved after this many writes… */
  saveAfterChanges?: number;
  /** …and at this interval (ms) whenever they have unsaved writes. */
  saveIntervalMs?: number;
}

export const DEFAULT_EXACT_SEARCH_MAX_VECTORS = 10_000;
/** Margin (ms) between this process's clock, which stamps saved files, and the database's, which stamps rows. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** What the vector-index gauges read: vectors held, and those queued for an HNSW graph still being built. */
export interface VectorIndexStats {
  vectors: number;
  pendingGraphVectors: number;
}

/** A store the vector-index gauges read; a threaded store answers from its thread. */
interface ObservedStore {
  stats(): VectorIndexStats | Promise<VectorIndexStats>;
}

const observedStores = new Set<ObservedStore>();
const meter = metrics.getMeter('@agent-platform/agent-memory');
meter
  .createObservableGauge('agent_memory.vector_index.vectors', { unit: '{vector}', description: 'Vectors held by the embedded index, over every agent.' })
  .addCallback(async (gauge) => gauge.observe((await sumStats()).vectors));
meter
  .createObservableGauge('agent_memory.vector_index.pending', {
    unit: '{vector}',
    description: 'Vectors waiting to enter an HNSW graph being built; searches cover them exactly meanwhile.',
  })
  .addCallback(async (gauge) => gauge.observe((await sumStats()).pendingGraphVectors));

/** Counts `store` in the vector-index gauges while it is open. */
export function observeIndexStats(store: ObservedStore): void {
  observedStores.add(store);
}

export function unobserveIndexStats(store: ObservedStore): void {
  observedStores.delete(store);
}

async function sumStats(): Promise<VectorIndexStats> {
  const total = { vectors: 0, pendingGraphVectors: 0 };
  // A threaded store that is restarting has nothing to tell: it is left out of this reading.
  for (const reading of await Promise.allSettled([...observedStores].map(async (store) => store.stats()))) {
    if (reading.status === 'rejected') continue;
    const stats = reading.value;
    total.vectors += stats.vectors;
    total.pendingGraphVectors += stats.pendingGraphVectors;
  }
  return total;
}

export class EmbeddedVectorStore implements VectorStore {
  readonly kind = 'embedded';
  private readonly agents = new Map<string, AgentVectorIndex>();
  private readonly agentOfId = new Map<string, AgentVectorIndex>();
  private readonly persistence: IndexPersistence | undefined;
  private readonly exactSearchMaxVectors: number;
  private readonly hnsw: HnswParams;
  private timer: NodeJS.Timeout | undefined;
  private state: 'new' | 'opening' | 'open' | 'closed' = 'new';
  private waitingSearches: WaitingSearch[] = [];

  constructor(private readonly options: EmbeddedVectorStoreOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) throw new RangeError(`dimensions must be a positive integer, not ${options.dimensions}`);
    this.exactSearchMaxVectors = options.exactSearchMaxVectors ?? DEFAULT_EXACT_SEARCH_MAX_VECTORS;
    this.hnsw = { ...DEFAULT_HNSW_PARAMS, ...options.hnsw };
    this.persistence =
      options.directory === undefined
        ? undefined
        : new IndexPersistence({
            directory: options.directory,
            model: options.model,
            dimensions: options.dimensions,
            exactSearchMaxVectors: this.exactSearchMaxVectors,
            logger: options.logger,
          });
  }

  async open(source: VectorSource): Promise<void> {
    if (this.state !== 'new') throw new Error(`vector store cannot open: it is ${this.state}`);
    this.state = 'opening';
    try {
      await this.load(source);
    } catch (error) {
      // Leaves the store as it was before, so opening can be tried again (the database was down).
      for (const index of this.agents.values()) index.retire();
      this.agents.clear();
      this.agentOfId.clear();
      this.state = 'new';
      throw error;
    }
    this.state = 'open';
    observeIndexStats(this);
    if (this.persistence) {
      this.timer = setInterval(() => this.saveChanged(), this.options.saveIntervalMs ?? 60_000);
      this.timer.unref();
    }
  }

  upsert(records: readonly VectorRecord[]): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.apply(records, 'throw');
    });
  }

  /**
   * Searches asked for in one turn of the event loop are answered together at its end, each
   * agent's as one batch (AgentVectorIndex.searchMany): under load, one native call answers many.
   */
  async search(query: VectorQuery): Promise<VectorHit[]> {
    this.assertOpen();
    const vector = unitVector(query.vector, this.options.dimensions);
    const limit = Math.floor(query.limit);
    if (!(limit >= 1) || query.memoryTypes?.length === 0) return [];
    if (this.waitingSearches.length === 0) setImmediate(() => this.answerWaitingSearches());
    const request = { vector, limit, filter: { memoryTypes: query.memoryTypes, audience: query.audience } };
    return new Promise((resolve, reject) => this.waitingSearches.push({ key: agentKey(query.tenantId, query.agentId), request, resolve, reject }));
  }

  similarities(query: SimilarityQuery): Promise<VectorHit[]> {
    return settle(() => {
      this.assertOpen();
      const vector = unitVector(query.vector, this.options.dimensions);
      return this.agents.get(agentKey(query.tenantId, query.agentId))?.similarities(vector, query.ids) ?? [];
    });
  }

  delete(ids: readonly string[]): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.removeIds(ids);
    });
  }

  deleteAgent(tenantId: string, agentId: string): Promise<void> {
    return settle(() => {
      this.assertOpen();
      const key = agentKey(tenantId, agentId);
      const index = this.agents.get(key);
      if (index) {
        for (const id of index.arena.allIds()) this.agentOfId.delete(id);
        index.retire();
        this.agents.delete(key);
      }
      this.persistence?.scheduleRemoval(tenantId, agentId);
    });
  }

  /** Every agent this store holds vectors of. */
  heldAgents(): AgentRef[] {
    return [...this.agents.values()].map((index) => ({ tenantId: index.tenantId, agentId: index.agentId }));
  }

  stats(): VectorIndexStats {
    let vectors = 0;
    let pendingGraphVectors = 0;
    for (const index of this.agents.values()) {
      vectors += index.size;
      pendingGraphVectors += index.graph?.pendingCount ?? 0;
    }
    return { vectors, pendingGraphVectors };
  }

  /** Saves what is unsaved (graphs included) and stops background work. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    unobserveIndexStats(this);
    clearInterval(this.timer);
    await this.persistence?.flush(this.agents.values());
    for (const index of this.agents.values()) index.retire();
  }

  /** Size and current search mode of one agent's index, for tests, benches and diagnostics. */
  describeAgent(tenantId: string, agentId: string): { vectors: number; searchMode: 'exact' | 'hnsw' } | undefined {
    const index = this.agents.get(agentKey(tenantId, agentId));
    return index && { vectors: index.size, searchMode: index.searchMode };
  }

  /** Resolves once every HNSW graph under construction is complete. */
  async whenIndexed(): Promise<void> {
    for (const index of this.agents.values()) await index.graph?.whenReady();
  }

  /** Loads the files, then reconciles them with the source (see the top of this file). */
  private async load(source: VectorSource): Promise<void> {
    const started = performance.now();
    const loaded = this.persistence ? await this.persistence.loadAll((tenantId, agentId, arena) => this.newIndex(tenantId, agentId, arena)) : { agents: [], problems: [] };
    let fromFiles = 0;
    for (const index of loaded.agents) {
      this.agents.set(agentKey(index.tenantId, index.agentId), index);
      for (const id of index.arena.allIds()) this.agentOfId.set(id, index);
      fromFiles += index.size;
    }
    const loadedIds = new Set(this.agentOfId.keys());

    const wanted = await source.ids();
    const wantedSet = new Set(wanted);
    const extra = [...loadedIds].filter((id) => !wantedSet.has(id));
    this.removeIds(extra);
    const missing = wanted.filter((id) => !this.agentOfId.has(id));
    let skipped = 0;
    const apply = (records: VectorRecord[]): Promise<void> => {
      skipped += this.apply(records, 'skip');
      return Promise.resolve();
    };
    let fetched = await fetchInBatches(source, missing, apply);
    const oldest = loaded.agents.reduce((earliest, index) => Math.min(earliest, index.savedAt?.getTime() ?? 0), Date.now());
    if (source.changedSince && loaded.agents.length > 0) {
      const changed = await source.changedSince(new Date(oldest - CLOCK_SKEW_MS));
      fetched += await fetchInBatches(source, changed.filter((id) => loadedIds.has(id) && this.agentOfId.has(id)), apply);
    }

    const logger = this.options.logger;
    const { directory } = this.options;
    if (loaded.problems.length > 0 || (directory !== undefined && fromFiles === 0 && fetched > 0)) {
      const reason = loaded.problems.length > 0 ? `${loaded.problems.length} unusable (${loaded.problems.slice(0, 3).join('; ')})` : 'no index files';
      logger?.warn({ directory, problems: loaded.problems }, `vector index: ${reason}; rebuilt ${fetched} vectors from the database`);
    }
    if (skipped > 0) logger?.warn({ skipped }, `vector index: skipped ${skipped} source records of the wrong dimension or with no direction`);
    logger?.info(
      { agents: this.agents.size, vectors: this.agentOfId.size, fromFiles, fetched, removed: extra.length, ms: Math.round(performance.now() - started) },
      'vector index open',
    );
  }

  /** Validates every record first, so a bad one leaves the store untouched; returns how many were skipped. */
  private apply(records: readonly VectorRecord[], invalid: 'throw' | 'skip'): number {
    const byAgent = new Map<string, { tenantId: string; agentId: string; items: IndexedVector[] }>();
    let skipped = 0;
    for (const record of records) {
      let vector: Float32Array;
      try {
        vector = unitVector(record.vector, this.options.dimensions);
      } catch (error) {
        if (invalid === 'throw') throw new RangeError(`vector of ${record.id}: ${describeError(error)}`, { cause: error });
        skipped += 1;
        continue;
      }
      const key = agentKey(record.tenantId, record.agentId);
      const group = byAgent.get(key) ?? { tenantId: record.tenantId, agentId: record.agentId, items: [] };
      group.items.push({ id: record.id, memoryType: record.memoryType, userId: record.userId, vector });
      byAgent.set(key, group);
    }
    for (const [key, group] of byAgent) {
      let index = this.agents.get(key);
      if (!index) {
        index = this.newIndex(group.tenantId, group.agentId);
        this.agents.set(key, index);
      }
      for (const item of group.items) {
        const previous = this.agentOfId.get(item.id);
        if (previous && previous !== index) this.removeIds([item.id]);
        this.agentOfId.set(item.id, index);
      }
      index.upsert(group.items);
      this.saveIfDue(index);
    }
    return skipped;
  }

  private removeIds(ids: Iterable<string>): void {
    const byIndex = new Map<AgentVectorIndex, string[]>();
    for (const id of ids) {
      const index = this.agentOfId.get(id);
      if (!index) continue;
      this.agentOfId.delete(id);
      const group = byIndex.get(index);
      if (group) group.push(id);
      else byIndex.set(index, [id]);
    }
    for (const [index, group] of byIndex) {
      index.remove(group);
      this.saveIfDue(index);
    }
  }

  private newIndex(tenantId: string, agentId: string, arena?: VectorArena): AgentVectorIndex {
    const settings = {
      dimensions: this.options.dimensions,
      exactSearchMaxVectors: this.exactSearchMaxVectors,
      hnsw: this.hnsw,
      onGraphFailure: (index: AgentVectorIndex, error: unknown) =>
        this.options.logger?.warn({ err: error, tenantId: index.tenantId, agentId: index.agentId }, `vector index: HNSW graph failed (${describeError(error)}); rebuilding it`),
      onGraphBuilt: (index: AgentVectorIndex, build: { inserted: number; ms: number }) =>
        this.options.logger?.info(
          { tenantId: index.tenantId, agentId: index.agentId, vectors: index.graph?.size, inserted: build.inserted, ms: Math.round(build.ms) },
          'vector index: HNSW graph complete',
        ),
    };
    return new AgentVectorIndex(tenantId, agentId, settings, arena);
  }

  private saveIfDue(index: AgentVectorIndex): void {
    if (this.state === 'open' && index.changesSinceSave >= (this.options.saveAfterChanges ?? 1_000)) this.persistence?.scheduleSave(index);
  }

  private saveChanged(): void {
    for (const index of this.agents.values()) if (index.changesSinceSave > 0) this.persistence?.scheduleSave(index);
  }

  private answerWaitingSearches(): void {
    const waiting = this.waitingSearches;
    this.waitingSearches = [];
    for (const [key, searches] of Map.groupBy(waiting, (search) => search.key)) {
      try {
        this.assertOpen();
        // Looked up now: an agent deleted meanwhile has nothing left to find.
        const answers = this.agents.get(key)?.searchMany(searches.map((search) => search.request)) ?? [];
        searches.forEach((search, at) => search.resolve(answers[at] ?? []));
      } catch (error) {
        for (const search of searches) search.reject(error);
      }
    }
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new Error(`vector store is ${this.state}, not open`);
  }
}

interface WaitingSearch {
  key: string;
  request: SearchRequest;
  resolve: (hits: VectorHit[]) => void;
  reject: (error: unknown) => void;
}

/** Runs synchronous work as a promise, so a throw rejects instead of escaping the call. */
function settle<T>(work: () => T): Promise<T> {
  return new Promise((resolve) => resolve(work()));
}

function agentKey(tenantId: string, agentId: string): string {
  return `${tenantId}\u0000${agentId}`;
}
