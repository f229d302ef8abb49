import type { EntityManager } from '@agent-platform/kit/db';
import { MemoryHistoryEntry } from './memory.entity.js';
import type { ChangeSource, HistoryView, NewMemoryItem } from './memory-items.js';

/**
 * `"recorded" as (<this>)` after `"changed" as (<update … returning the item's columns and
 * "old_content">)`: records the UPDATE in the item's history, in the statement that makes it.
 * Its markers: the source, the session, the time.
 */
export const RECORD_UPDATE = `insert into "memory_history" ("tenant_id", "agent_id", "memory_id", "event", "old_content", "new_content", "source", "session_id", "created_at")
  select "tenant_id", "agent_id", "id", 'UPDATE', "old_content", "content", ?, ?, ? from "changed"`;

/** Rows a history entry of each deleted item is made from, and the ids to drop from the index. */
export const DELETED_COLUMNS = `"id", "tenant_id", "agent_id", "content"`;

/**
 * After `with "gone" as (<delete … returning DELETED_COLUMNS>)`: records each deleted item's
 * DELETE in its history, in the statement that deletes it. Its markers: the source, the session,
 * the time.
 */
export const RECORD_DELETIONS = `insert into "memory_history" ("tenant_id", "agent_id", "memory_id", "event", "old_content", "source", "session_id", "created_at")
  select "tenant_id", "agent_id", "id", 'DELETE', "content", ?, ?, ? from "gone"
  returning "memory_id", "agent_id"`;

/**
 * Memory items' history: every change of an item, appended and kept after the item is gone. The
 * statements that change items record their changes through this module (an update and a
 * deletion in the very statement, with the fragments above).
 */
export class MemoryHistoryRepository {
  constructor(private readonly em: EntityManager) {}

  /** In the caller's transaction: the ADD of each item just inserted. */
  async recordAdditions(items: readonly NewMemoryItem[], change: ChangeSource): Promise<void> {
    if (items.length === 0) return;
    await this.em.insertMany(
      MemoryHistoryEntry,
      items.map((item) => ({
        tenantId: item.tenantId,
        agentId: item.agentId,
        memoryId: item.id,
        event: 'ADD' as const,
        oldContent: null,
        newContent: item.content,
        source: change.source,
        sessionId: change.sessionId,
        createdAt: item.createdAt,
      })),
    );
  }

  /** Oldest first; empty when the tenant never had the item. */
  async history(tenantId: string, memoryId: string): Promise<HistoryView[]> {
    const entries = await this.em.find(MemoryHistoryEntry, { tenantId, memoryId }, { orderBy: { seq: 'asc' } });
    return entries.map(({ memoryId: id, event, oldContent, newContent, source, sessionId, createdAt }) => ({ memoryId: id, event, oldContent, newContent, source, sessionId, createdAt }));
  }

  /** Ids of the agent's items a session's turns added or changed (memory_history_session_idx): a session changes few. */
  async changedIn(tenantId: string, agentId: string, sessionId: string): Promise<string[]> {
    const rows = await this.em.execute<{ memory_id: string }[]>(
      `select distinct "memory_id" from "memory_history" where "session_id" = ? and "tenant_id" = ? and "agent_id" = ?`,
      [sessionId, tenantId, agentId],
      'all',
    );
    return rows.map((row) => row.memory_id);
  }
}
