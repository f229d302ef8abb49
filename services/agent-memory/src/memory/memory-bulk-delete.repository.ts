import type { EntityManager } from '@agent-platform/kit/db';
import { DELETED_COLUMNS, RECORD_DELETIONS } from './memory-history.repository.js';
import type { ChangeSource, ItemSelection } from './memory-items.js';

/**
 * Deletions of many memory items at once: a document's chunks gone from it, an agent's items a
 * caller selects, a document with all its chunks. Each deletion is recorded in its item's history
 * by the statement that makes it; the caller drops the returned ids from the vector index.
 */
export class MemoryBulkDeleteRepository {
  constructor(private readonly em: EntityManager) {}

  /** In the caller's transaction: the tenant's items of `ids`, each deletion recorded. */
  async deleteItems(tenantId: string, ids: readonly string[], change: ChangeSource, now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.em.execute(
      `with "gone" as (delete from "memory_items" where "id" = any(string_to_array(?, ',')) and "tenant_id" = ? returning ${DELETED_COLUMNS}) ${RECORD_DELETIONS}`,
      [ids.join(','), tenantId, change.source, change.sessionId, now],
      'all',
    );
  }

  /**
   * Every item of the agent matching `selection` (with `userId`, that user's only: never the shared
   * ones), each deletion recorded; documents whose last chunks these were go too (not those still
   * being processed, which have none yet). Ids of the deleted items.
   */
  async deleteMatching(tenantId: string, agentId: string, selection: ItemSelection, now: Date): Promise<string[]> {
    return this.em.transactional(async (em) => {
      const rows = await em.execute<{ memory_id: string; document_id: string | null }[]>(
        `with "gone" as (
           delete from "memory_items" where "tenant_id" = ? and "agent_id" = ?
             and (?::text is null or "user_id" = ?::text) and (?::text is null or "memory_type" = ?::text)
           returning ${DELETED_COLUMNS}, "document_id"
         ), "recorded" as (${RECORD_DELETIONS})
         select "id" as "memory_id", "document_id" from "gone"`,
        [tenantId, agentId, selection.userId ?? null, selection.userId ?? null, selection.memoryType ?? null, selection.memoryType ?? null, 'api', null, now],
        'all',
      );
      const documentIds = [...new Set(rows.flatMap((row) => (row.document_id === null ? [] : [row.document_id])))];
      if (documentIds.length > 0) {
        await em.execute(
          `delete from "memory_documents" as d where d."id" = any(string_to_array(?, ',')) and d."tenant_id" = ?
             and not exists (select 1 from "memory_items" as i where i."document_id" = d."id")`,
          [documentIds.join(','), tenantId],
          'run',
        );
      }
      return rows.map((row) => row.memory_id);
    });
  }

  /** Ids of the removed chunks (each deletion recorded), or undefined when the document was not the tenant's. */
  async deleteDocument(tenantId: string, id: string, now: Date): Promise<string[] | undefined> {
    return this.em.transactional(async (em) => {
      const chunks = await em.execute<{ memory_id: string }[]>(
        `with "gone" as (delete from "memory_items" where "document_id" = ? and "tenant_id" = ? returning ${DELETED_COLUMNS}) ${RECORD_DELETIONS}`,
        [id, tenantId, 'document', null, now],
        'all',
      );
      const removed = await em.execute<{ id: string }[]>(`delete from "memory_documents" where "id" = ? and "tenant_id" = ? returning "id"`, [id, tenantId], 'all');
      return removed.length === 0 ? undefined : chunks.map((chunk) => chunk.memory_id);
    });
  }
}
