import { PreparedStatement, type EntityManager, type StatementValue } from '@agent-platform/kit/db';
import type { MemoryType } from '../agents/agents.entity.js';
import type { VectorRecord, VectorSource } from '../vectors/vector-store.js';
import { MemoryDocument, MemoryItem } from './memory.entity.js';

export interface NewMemoryItem {
  id: string;
  tenantId: string;
  agentId: string;
  documentId: string | null;
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  embedding: Float32Array;
  embeddingModel: string;
  createdAt: Date;
}

export interface NewDocument {
  id: string;
  tenantId: string;
  agentId: string;
  title: string | null;
  chunks: number;
  createdAt: Date;
}

/** What every answer about an item shows. */
export interface MemoryItemView {
  id: string;
  agentId: string;
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

/** A stored item as search ranks it: its text, metadata and vector. */
export interface Candidate extends MemoryItemView {
  embedding: Float32Array;
}

export interface CandidateScope {
  tenantId: string;
  agentId: string;
  memoryTypes: readonly string[];
  /** Metadata values compared for equality (jsonb containment). */
  filter: Record<string, string | number | boolean> | undefined;
  embeddingModel: string;
}

interface CandidateRow {
  id: string;
  agent_id: string;
  memory_type: MemoryType;
  content: string;
  metadata: Record<string, unknown> | string;
  created_at: Date | string;
  embedding: Buffer;
}

// Floats are stored as the platform writes them: little-endian on every machine Node supports.
export function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromBytes(bytes: Buffer): Float32Array {
  // A copy: the pg driver's Buffer may be a view on a shared pool with an unaligned offset.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

// Matches ranked per full-text query, at most. Beyond what a selective word matches, a sample
// this size is as good as a larger one: the vector half and the exact re-scoring do the rest.
const LEXICAL_SCAN_MAX = 200;

/** What every search statement is confined to: one agent of one tenant, its memory types, one embedding model. */
const SCOPE = `"tenant_id" = ? and "agent_id" = ? and "memory_type" = any(string_to_array(?, ',')) and "embedding_model" = ?`;
const FILTERED_SCOPE = `${SCOPE} and "metadata" @> ?::jsonb`;
const CANDIDATE_COLUMNS = `"id", "agent_id", "memory_type", "content", "metadata", "created_at", "embedding"`;

/** The scope's SQL (with a metadata filter when it has one, compared by jsonb containment) and the values of its markers. */
function scopeOf(scope: CandidateScope): { sql: string; values: StatementValue[]; filtered: boolean } {
  const values: StatementValue[] = [scope.tenantId, scope.agentId, scope.memoryTypes.join(','), scope.embeddingModel];
  if (scope.filter === undefined || Object.keys(scope.filter).length === 0) return { sql: SCOPE, values, filtered: false };
  return { sql: FILTERED_SCOPE, values: [...values, JSON.stringify(scope.filter)], filtered: true };
}

/**
 * A statement over the scope, prepared (planning these cost as much as running them), twice: as
 * is and with the metadata filter.
 */
function scoped<Row>(name: string, sql: (scope: string) => string): (scope: CandidateScope) => [PreparedStatement<Row>, StatementValue[]] {
  const plain = new PreparedStatement<Row>(name, sql(SCOPE));
  const filtered = new PreparedStatement<Row>(`${name}_filtered`, sql(FILTERED_SCOPE));
  return (scope) => {
    const { values, filtered: isFiltered } = scopeOf(scope);
    return [isFiltered ? filtered : plain, values];
  };
}

/**
 * Planned at every call, never prepared: whether the full-text index or a plain scan that stops
 * at the limit is cheaper depends on how common the words are, which only the values tell the
 * planner. A generic plan built the index's bitmap of all 100k items for a word in every item:
 * 20 ms, where the scan took 4.
 */
function rankedMatchSql(scope: string): string {
  return `select "id" from (
     select "id", "search_vector", "created_at" from "memory_items"
      where ${scope} and "search_vector" @@ websearch_to_tsquery('simple', ?)
      limit ${LEXICAL_SCAN_MAX}
   ) as "matches"
   order by ts_rank("search_vector", websearch_to_tsquery('simple', ?)) desc, "created_at" desc
   limit ?`;
}

const candidatesById = scoped<CandidateRow>(
  'memory_candidates_by_id',
  (scope) => `select ${CANDIDATE_COLUMNS} from "memory_items" where ${scope} and "id" = any(string_to_array(?, ','))`,
);
const candidatesInScope = scoped<CandidateRow>('memory_candidates_in_scope', (scope) => `select ${CANDIDATE_COLUMNS} from "memory_items" where ${scope}`);
const countInScope = scoped<{ count: string }>('memory_count_in_scope', (scope) => `select count(*) as "count" from "memory_items" where ${scope}`);

/** Memory items and documents. Every statement is scoped by tenant and agent. */
export class MemoryRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** In the caller's transaction: a document, then its chunks or other items. */
  async insert(document: NewDocument | undefined, items: readonly NewMemoryItem[]): Promise<void> {
    if (document) await this.em.insert(MemoryDocument, document);
    if (items.length > 0) await this.em.insertMany(MemoryItem, items.map((item) => ({ ...item, embedding: toBytes(item.embedding) })));
  }

  /** Newest first. */
  async list(tenantId: string, agentId: string, memoryType: string | undefined, limit: number, offset: number): Promise<{ items: MemoryItem[]; total: number }> {
    const where = { tenantId, agentId, ...(memoryType === undefined ? {} : { memoryType: memoryType as MemoryType }) };
    const [items, total] = await this.em.findAndCount(MemoryItem, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /** The deleted item's agent, or undefined when it was not the tenant's. */
  async deleteItem(tenantId: string, id: string): Promise<string | undefined> {
    const rows = await this.em.execute<{ agent_id: string }[]>(`delete from "memory_items" where "id" = ? and "tenant_id" = ? returning "agent_id"`, [id, tenantId], 'all');
    return rows[0]?.agent_id;
  }

  /** Ids of the removed chunks, or undefined when the document was not the tenant's. */
  async deleteDocument(tenantId: string, id: string): Promise<string[] | undefined> {
    return this.em.transactional(async (em) => {
      const chunks = await em.execute<{ id: string }[]>(`delete from "memory_items" where "document_id" = ? and "tenant_id" = ? returning "id"`, [id, tenantId], 'all');
      const removed = await em.execute<{ id: string }[]>(`delete from "memory_documents" where "id" = ? and "tenant_id" = ? returning "id"`, [id, tenantId], 'all');
      return removed.length === 0 ? undefined : chunks.map((chunk) => chunk.id);
    });
  }

  /**
   * Items that contain the words, best full-text rank first: all of them (`a b c`), then, when
   * that finds too few, any of them (`a or b or c`). At most `LEXICAL_SCAN_MAX` matches are
   * ranked per query: a word common to a large memory would otherwise have the database rank all
   * of it, and the vector half and the exact re-scoring cover what the sample misses.
   */
  async lexicalMatches(scope: CandidateScope, terms: { all: string; any: string }, limit: number): Promise<string[]> {
    if (terms.all.trim() === '') return [];
    const found = await this.rankedMatches(scope, terms.all, limit);
    if (found.length >= limit || terms.any === terms.all) return found;
    const more = await this.rankedMatches(scope, terms.any, limit);
    return [...new Set([...found, ...more])].slice(0, limit);
  }

  private async rankedMatches(scope: CandidateScope, websearch: string, limit: number): Promise<string[]> {
    const { sql, values } = scopeOf(scope);
    const rows = await this.em.execute<{ id: string }[]>(rankedMatchSql(sql), [...values, websearch, websearch, limit], 'all');
    return rows.map((row) => row.id);
  }

  /** The items among `ids` (or, with `ids` undefined, every item) in the scope, vectors included. */
  async candidates(scope: CandidateScope, ids: readonly string[] | undefined): Promise<Candidate[]> {
    if (ids?.length === 0) return [];
    const [statement, values] = ids === undefined ? candidatesInScope(scope) : candidatesById(scope);
    const rows = await statement.rows(this.em, ids === undefined ? values : [...values, ids.join(',')]);
    return rows.map((row) => ({
      id: row.id,
      agentId: row.agent_id,
      memoryType: row.memory_type,
      content: row.content,
      metadata: typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata,
      createdAt: new Date(row.created_at),
      embedding: fromBytes(row.embedding),
    }));
  }

  /** How many items the scope holds: a small filtered set is ranked exactly, without the index. */
  async count(scope: CandidateScope): Promise<number> {
    const [statement, values] = countInScope(scope);
    const [row] = await statement.rows(this.em, values);
    return Number(row?.count ?? 0);
  }

  /**
   * The database as the vector index's source: every item of one embedding model. Items are never
   * re-embedded in place (content does not change), so ids alone reconcile an index.
   */
  vectorSource(embeddingModel: string): VectorSource {
    return {
      ids: async () => {
        const rows = await this.em.fork().execute<{ id: string }[]>(`select "id" from "memory_items" where "embedding_model" = ?`, [embeddingModel], 'all');
        return rows.map((row) => row.id);
      },
      records: async (ids) => {
        if (ids.length === 0) return [];
        const rows = await this.em
          .fork()
          .execute<{ id: string; tenant_id: string; agent_id: string; memory_type: string; embedding: Buffer }[]>(
            `select "id", "tenant_id", "agent_id", "memory_type", "embedding" from "memory_items" where "id" in (?) and "embedding_model" = ?`,
            [[...ids], embeddingModel],
            'all',
          );
        return rows.map(
          (row): VectorRecord => ({ id: row.id, tenantId: row.tenant_id, agentId: row.agent_id, memoryType: row.memory_type, vector: fromBytes(row.embedding) }),
        );
      },
    };
  }
}
