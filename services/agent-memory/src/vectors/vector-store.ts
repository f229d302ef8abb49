/**
 * The VectorStore port: nearest-neighbour search over the embeddings of memory items. PostgreSQL
 * stays the source of truth (each item row keeps its embedding and the model that made it); an
 * index is a rebuildable copy of it, so every adapter can be dropped and refilled from a
 * `VectorSource`. Adapters: `EmbeddedVectorStore` (usearch, in process, optionally persisted to a
 * directory) and `QdrantVectorStore` (a Qdrant server). One store serves one embedding model:
 * vectors of different models are never compared.
 *
 * Vectors are unit length, so cosine similarity is their dot product; scores are raw cosine in
 * [-1, 1] (mapping them to [0, 1] is the caller's business). A vector of the wrong dimension, or
 * one with no direction (all zero, not finite), is a programming error: `RangeError`. A store that
 * cannot reach its server rejects with `DomainError('service_unavailable', …)`.
 *
 * Items belong to one (tenant, agent) and, within it, to one end user of the tenant's application
 * or to no one (shared; decisions §14). A search never leaves its tenant and agent, and a search
 * made for an end user (`audience`) never sees another end user's items.
 */
import { normalised } from '../models/embedder.js';

export interface VectorRecord {
  id: string;
  tenantId: string;
  agentId: string;
  memoryType: string;
  /** The end user the item belongs to; null for an item shared by all of them. */
  userId: string | null;
  vector: Float32Array;
}

/** Whom a search is made for: one end user (`userId`), or `null` for no end user (shared items only). */
export interface VectorAudience {
  userId: string | null;
}

export interface VectorQuery {
  tenantId: string;
  agentId: string;
  vector: Float32Array;
  limit: number;
  /** Only items of these memory types; an empty list matches nothing. */
  memoryTypes?: readonly string[];
  /**
   * Absent: every item of the agent (an operator's search). Present: the items of
   * `audience.userId` and the shared items, so `{ userId: null }` finds the shared items only.
   */
  audience?: VectorAudience;
}

export interface SimilarityQuery {
  tenantId: string;
  agentId: string;
  vector: Float32Array;
  ids: readonly string[];
}

export interface VectorHit {
  id: string;
  /** cosine similarity, [-1, 1] */
  score: number;
}

/** Where an index that is missing, stale or corrupt is rebuilt from: the database. */
export interface VectorSource {
  /** Ids of every stored item of this embedding model (cheap: ids only). */
  ids(): Promise<string[]>;
  /** The records for these ids (vectors included), in batches the caller picks. */
  records(ids: readonly string[]): Promise<VectorRecord[]>;
  /**
   * Ids of items of this model whose vector was replaced at or after `since` (re-embedded in
   * place); not those added since, which `ids()` brings in. Optional: without it a persisted index
   * is reconciled by ids only, so a vector replaced while the index was not saving (a crash) keeps
   * its old value until its next upsert.
   */
  changedSince?(since: Date): Promise<string[]>;
  /** Where an index learns of the changes other processes make after it opened; see `VectorFeed`. */
  feed?: VectorFeed;
}

/**
 * The database's record of every change to an agent's items, read from a position: what a
 * replica's embedded index applies to answer as the database is (decisions §18.6). A position is
 * opaque (a PostgreSQL snapshot): the changes after it are those it could not see.
 */
export interface VectorFeed {
  /** The database's position now. */
  position(): Promise<string>;
  /** The agent's items changed after `position`, as they are now, and the position they are read at. */
  changes(tenantId: string, agentId: string, position: string): Promise<FeedChanges>;
  /**
   * Of `agents`, those deleted: their history goes with them, so `changes` cannot tell, and a
   * replica that never searches them again would keep their vectors to its end.
   */
  gone(agents: readonly AgentRef[]): Promise<AgentRef[]>;
}

/** One agent of one tenant. */
export interface AgentRef {
  tenantId: string;
  agentId: string;
}

export interface FeedChanges {
  position: string;
  /** Items that exist, with their vectors. */
  records: VectorRecord[];
  /** Items that are gone (or were re-embedded with another model). */
  removed: string[];
}

export interface VectorStore {
  readonly kind: 'embedded' | 'qdrant';
  /** Prepares the index (collection, payload indexes, files) and reconciles it with `source`. */
  open(source: VectorSource): Promise<void>;
  upsert(records: readonly VectorRecord[]): Promise<void>;
  /**
   * Best first; only items of query.tenantId and query.agentId, ever, narrowed by memoryTypes and
   * audience when given.
   */
  search(query: VectorQuery): Promise<VectorHit[]>;
  /**
   * The cosine similarity of `vector` to each item of `ids` the store holds for that tenant and
   * agent, in no particular order; an id it does not hold (or of another agent) is left out.
   * Search scores the full-text half's finds with it rather than reading their vectors back.
   */
  similarities(query: SimilarityQuery): Promise<VectorHit[]>;
  delete(ids: readonly string[]): Promise<void>;
  /** Every vector of one agent. */
  deleteAgent(tenantId: string, agentId: string): Promise<void>;
  close(): Promise<void>;
}

/** What a store logs through: every line is fields and a message (a pino logger is one). */
export interface VectorStoreLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** How many records a store asks `VectorSource.records` for at once. */
export const SOURCE_BATCH_SIZE = 500;

/** Reads every record of `ids` from `source` in batches, handing each batch to `apply`. */
export async function fetchInBatches(
  source: VectorSource,
  ids: readonly string[],
  apply: (records: VectorRecord[]) => Promise<void>,
): Promise<number> {
  let fetched = 0;
  for (let start = 0; start < ids.length; start += SOURCE_BATCH_SIZE) {
    const records = await source.records(ids.slice(start, start + SOURCE_BATCH_SIZE));
    fetched += records.length;
    await apply(records);
  }
  return fetched;
}

/** The vector scaled to unit length; a RangeError when it has the wrong length or no direction. */
export function unitVector(vector: Float32Array, dimensions: number): Float32Array {
  if (vector.length !== dimensions) throw new RangeError(`expected ${dimensions} dimensions, got ${vector.length}`);
  const unit = normalised(vector);
  if (!unit) throw new RangeError('the vector is zero or not finite');
  return unit;
}
