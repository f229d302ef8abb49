import type { EntityManager } from '@agent-platform/kit/db';
import type { MemoryType } from '../agents/agents.entity.js';
import { MemoryItem } from './memory.entity.js';
import { DELETED_COLUMNS, MemoryHistoryRepository, RECORD_DELETIONS, RECORD_UPDATE } from './memory-history.repository.js';
import {
  CANDIDATE_COLUMNS,
  candidateOf,
  QUALIFIED_CANDIDATE_COLUMNS,
  toBytes,
  viewOf,
  type Candidate,
  type CandidateRow,
  type ChangeSource,
  type ItemSelection,
  type MemoryItemView,
  type NewMemoryItem,
} from './memory-items.js';

/** Items one statement inserts: for a document's chunks, about 1 MB of SQL, built in ~10 ms. */
const INSERT_BATCH_ROWS = 200;

/**
 * Memory items one at a time (search over them: memory-search.repository.ts; their history:
 * memory-history.repository.ts; deletions of many: memory-bulk-delete.repository.ts). Every
 * statement is scoped by tenant and agent.
 */
export class MemoryRepository {
  private readonly em: EntityManager;
  private readonly history: MemoryHistoryRepository;

  constructor(em: EntityManager) {
    this.em = em;
    this.history = new MemoryHistoryRepository(em);
  }

  /**
   * In the caller's transaction: items (a document's chunks, say), each with its ADD in history,
   * INSERT_BATCH_ROWS to a statement. The ORM writes a statement's values into its text: one
   * statement of a 20 MiB text's 26,666 chunks was about 100 MB of SQL, and building it held the
   * service's thread for seconds. `signal` aborts between statements.
   */
  async insert(items: readonly NewMemoryItem[], change: ChangeSource, signal?: AbortSignal): Promise<void> {
    for (let from = 0; from < items.length; from += INSERT_BATCH_ROWS) {
      // A stop past its grace: the caller's transaction rolls back, and the work is done again.
      signal?.throwIfAborted();
      const batch = items.slice(from, from + INSERT_BATCH_ROWS);
      await this.em.insertMany(MemoryItem, batch.map((item) => ({ ...item, embedding: toBytes(item.embedding), updatedAt: null })));
      await this.history.recordAdditions(batch, change);
    }
  }

  /** Newest first; with `userId`, that end user's items only. */
  async list(
    tenantId: string,
    agentId: string,
    selection: ItemSelection,
    limit: number,
    offset: number,
  ): Promise<{ items: MemoryItemView[]; total: number }> {
    const changedBySession = selection.sessionId === undefined ? undefined : await this.history.changedIn(tenantId, agentId, selection.sessionId);
    const where = {
      tenantId,
      agentId,
      ...(selection.memoryType === undefined ? {} : { memoryType: selection.memoryType as MemoryType }),
      ...(selection.userId === undefined ? {} : { userId: selection.userId }),
      ...(changedBySession === undefined ? {} : { id: { $in: changedBySession } }),
    };
    const [items, total] = await this.em.findAndCount(MemoryItem, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items: items.map(viewOf), total };
  }

  async find(tenantId: string, id: string): Promise<Candidate | undefined> {
    const rows = await this.em.execute<CandidateRow[]>(`select ${CANDIDATE_COLUMNS} from "memory_items" where "id" = ? and "tenant_id" = ?`, [id, tenantId], 'all');
    return rows[0] && candidateOf(rows[0]);
  }

  /**
   * The item's new content (with its embedding) and/or metadata, and the UPDATE in its history,
   * in one statement. Undefined when the item is gone (deleted meanwhile).
   */
  async update(
    tenantId: string,
    id: string,
    change: { content?: string; embedding?: Float32Array; embeddingModel?: string; metadata?: Record<string, unknown> },
    source: ChangeSource,
    now: Date,
  ): Promise<MemoryItemView | undefined> {
    // One statement: the row locked as it is, changed, and the change recorded beside it.
    const rows = await this.em.execute<CandidateRow[]>(
      `with "old" as (select "id", "content" from "memory_items" where "id" = ? and "tenant_id" = ? for update),
       "changed" as (
         update "memory_items" as "item" set
           "content" = coalesce(?, "item"."content"), "embedding" = coalesce(?, "item"."embedding"),
           "embedding_model" = coalesce(?, "item"."embedding_model"), "metadata" = coalesce(?::jsonb, "item"."metadata"), "updated_at" = ?
         from "old" where "item"."id" = "old"."id"
         returning ${QUALIFIED_CANDIDATE_COLUMNS}, "item"."tenant_id", "old"."content" as "old_content"
       ),
       "recorded" as (${RECORD_UPDATE})
       select * from "changed"`,
      [
        id,
        tenantId,
        change.content ?? null,
        change.embedding ? toBytes(change.embedding) : null,
        change.embeddingModel ?? null,
        change.metadata ? JSON.stringify(change.metadata) : null,
        now,
        source.source,
        source.sessionId,
        now,
      ],
      'all',
    );
    return rows[0] && viewOf(candidateOf(rows[0]));
  }

  /** The deleted item's agent, or undefined when it was not the tenant's; its DELETE is recorded with it. */
  async deleteItem(tenantId: string, id: string, change: ChangeSource, now: Date): Promise<string | undefined> {
    const rows = await this.em.execute<{ agent_id: string }[]>(
      `with "gone" as (delete from "memory_items" where "id" = ? and "tenant_id" = ? returning ${DELETED_COLUMNS}) ${RECORD_DELETIONS}`,
      [id, tenantId, change.source, change.sessionId, now],
      'all',
    );
    return rows[0]?.agent_id;
  }

  /**
   * What extraction may change for one owner (an end user, or nobody: the shared items): their
   * semantic items that are not a document's chunks. With `ids`, only those; else all of them,
   * when there are at most `limit` (undefined when there are more).
   */
  async extractable(owner: { tenantId: string; agentId: string; userId: string | null; embeddingModel: string }, ids?: readonly string[], limit = 0): Promise<Candidate[] | undefined> {
    const rows = await this.em.execute<CandidateRow[]>(
      `select ${CANDIDATE_COLUMNS} from "memory_items"
        where "tenant_id" = ? and "agent_id" = ? and "user_id" is not distinct from ?::text and "memory_type" = 'semantic'
          and "document_id" is null and "embedding_model" = ? ${ids === undefined ? 'limit ?' : `and "id" = any(string_to_array(?, ','))`}`,
      [owner.tenantId, owner.agentId, owner.userId, owner.embeddingModel, ids === undefined ? limit + 1 : ids.join(',')],
      'all',
    );
    if (ids === undefined && rows.length > limit) return undefined;
    return rows.map(candidateOf);
  }
}
