import type { EntityManager } from '@agent-platform/kit/db';
import type { MemoryType } from '../agents/agents.entity.js';
import { metadataOf, toBytes } from './memory-items.js';

/** An item stored under a model the current embedder supersedes, locked by this replica's transaction; what its embedded text is made of. */
export interface StaleItem {
  id: string;
  tenantId: string;
  agentId: string;
  userId: string | null;
  memoryType: MemoryType;
  documentId: string | null;
  content: string;
  metadata: Record<string, unknown>;
}

interface StaleRow {
  id: string;
  tenant_id: string;
  agent_id: string;
  user_id: string | null;
  memory_type: MemoryType;
  document_id: string | null;
  content: string;
  metadata: Record<string, unknown> | string;
}

/**
 * The items left to re-embed after the embedder changed. Each batch is claimed with `for update
 * skip locked` in the transaction that re-embeds it: replicas never take the same item, a replica
 * that dies mid-batch leaves its items to whoever looks next (its locks go with its connection),
 * and an item a caller is changing meanwhile is skipped and taken at the next pass.
 */
export class ReembeddingRepository {
  constructor(private readonly em: EntityManager) {}

  /** Whether any item of `models` is left, locked or not (not a locking read). */
  async anyLeft(models: readonly string[]): Promise<boolean> {
    const rows = await this.em.execute<{ left: boolean }[]>(
      `select exists (select 1 from "memory_items" where "embedding_model" = any(string_to_array(?, ','))) as "left"`,
      [models.join(',')],
      'all',
    );
    return rows[0]?.left === true;
  }

  /** How many items of `models` are left, for the log. */
  async countLeft(models: readonly string[]): Promise<number> {
    const rows = await this.em.execute<{ count: string }[]>(`select count(*) as "count" from "memory_items" where "embedding_model" = any(string_to_array(?, ','))`, [models.join(',')], 'all');
    return Number(rows[0]?.count ?? 0);
  }

  /**
   * In the caller's transaction: up to `limit` items of `models` with ids after `after`, in id
   * order (a replica's pass walks the primary key once), locked; those another transaction holds
   * are skipped.
   */
  async claim(models: readonly string[], after: string, limit: number): Promise<StaleItem[]> {
    const rows = await this.em.execute<StaleRow[]>(
      `select "id", "tenant_id", "agent_id", "user_id", "memory_type", "document_id", "content", "metadata" from "memory_items"
        where "embedding_model" = any(string_to_array(?, ',')) and "id" > ?
        order by "id" limit ? for update skip locked`,
      [models.join(','), after, limit],
      'all',
    );
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      agentId: row.agent_id,
      userId: row.user_id,
      memoryType: row.memory_type,
      documentId: row.document_id,
      content: row.content,
      metadata: metadataOf(row.metadata),
    }));
  }

  /**
   * In the claim's transaction: each item's new vector and model, and the transaction that wrote
   * them (which the vector feed reads). Neither `updated_at` nor history changes: the content did not.
   */
  async store(items: readonly { id: string; embedding: Float32Array }[], model: string): Promise<void> {
    if (items.length === 0) return;
    await this.em.execute(
      `update "memory_items" as "item" set "embedding" = "new"."embedding", "embedding_model" = ?, "embedded_xact" = pg_current_xact_id()
        from (values ${items.map(() => '(?::text, ?::bytea)').join(', ')}) as "new" ("id", "embedding")
        where "item"."id" = "new"."id"`,
      [model, ...items.flatMap((item) => [item.id, toBytes(item.embedding)])],
      'run',
    );
  }
}
