import type { EntityManager } from '@agent-platform/kit/db';
import { SOURCE_BATCH_SIZE, type AgentRef, type FeedChanges, type VectorFeed, type VectorRecord, type VectorSource } from '../vectors/vector-store.js';
import { fromBytes } from './memory-items.js';

interface RecordRow {
  id: string;
  tenant_id: string;
  agent_id: string;
  user_id: string | null;
  memory_type: string;
  embedding: Buffer;
}

const RECORD_COLUMNS = `"id", "tenant_id", "agent_id", "user_id", "memory_type", "embedding"`;

function recordOf(row: RecordRow): VectorRecord {
  return { id: row.id, tenantId: row.tenant_id, agentId: row.agent_id, userId: row.user_id, memoryType: row.memory_type, vector: fromBytes(row.embedding) };
}

/**
 * The items of one agent changed where a snapshot could not see (by a transaction that had not
 * committed when it was taken): those with history entries, and those re-embedded in place
 * (`embedded_xact`, which records no history), joined to the items as they are now, with the
 * snapshot this statement reads at. A transaction with a lower entry `seq` may commit after one
 * with a higher, so the snapshot, not the `seq`, says what was seen.
 */
const FEED_CHANGES_SQL = `with "now" as (select pg_current_snapshot()::text as "position"),
  "changed" as (
    select "memory_id" from "memory_history"
     where "agent_id" = ? and "tenant_id" = ? and "xact" >= pg_snapshot_xmin(?::pg_snapshot) and not pg_visible_in_snapshot("xact", ?::pg_snapshot)
    union
    select "id" from "memory_items"
     where "agent_id" = ? and "tenant_id" = ? and "embedded_xact" >= pg_snapshot_xmin(?::pg_snapshot) and not pg_visible_in_snapshot("embedded_xact", ?::pg_snapshot)
  )
  select "now"."position", "changed"."memory_id", "item"."user_id", "item"."memory_type", "item"."embedding"
    from "now" left join ("changed" left join "memory_items" as "item" on "item"."id" = "changed"."memory_id" and "item"."embedding_model" = ?) on true`;

interface FeedRow {
  position: string;
  memory_id: string | null;
  user_id: string | null;
  memory_type: string | null;
  embedding: Buffer | null;
}

/** The database as the vector index's source: every item of one embedding model, and the feed of their changes. */
export function vectorSource(em: EntityManager, embeddingModel: string): VectorSource {
  const feed: VectorFeed = {
    position: async () => {
      const rows = await em.fork().execute<{ position: string }[]>(`select pg_current_snapshot()::text as "position"`, [], 'all');
      return rows[0]!.position;
    },
    changes: async (tenantId, agentId, position): Promise<FeedChanges> => {
      const unseenBy = [agentId, tenantId, position, position];
      const rows = await em.fork().execute<FeedRow[]>(FEED_CHANGES_SQL, [...unseenBy, ...unseenBy, embeddingModel], 'all');
      const changes: FeedChanges = { position: rows[0]!.position, records: [], removed: [] };
      for (const row of rows) {
        if (row.memory_id === null) continue;
        if (row.embedding === null || row.memory_type === null) changes.removed.push(row.memory_id);
        else changes.records.push(recordOf({ id: row.memory_id, tenant_id: tenantId, agent_id: agentId, user_id: row.user_id, memory_type: row.memory_type, embedding: row.embedding }));
      }
      return changes;
    },
    gone: async (agents): Promise<AgentRef[]> => {
      const present = new Set<string>();
      // In batches: one statement takes at most 65,535 parameters.
      for (let start = 0; start < agents.length; start += SOURCE_BATCH_SIZE) {
        const ids = agents.slice(start, start + SOURCE_BATCH_SIZE).map((agent) => agent.agentId);
        const rows = await em.fork().execute<{ id: string }[]>(`select "id" from "agents" where "id" in (?)`, [ids], 'all');
        for (const row of rows) present.add(row.id);
      }
      return agents.filter((agent) => !present.has(agent.agentId));
    },
  };
  return {
    ids: async () => {
      const rows = await em.fork().execute<{ id: string }[]>(`select "id" from "memory_items" where "embedding_model" = ?`, [embeddingModel], 'all');
      return rows.map((row) => row.id);
    },
    records: async (ids) => {
      if (ids.length === 0) return [];
      const rows = await em.fork().execute<RecordRow[]>(`select ${RECORD_COLUMNS} from "memory_items" where "id" in (?) and "embedding_model" = ?`, [[...ids], embeddingModel], 'all');
      return rows.map(recordOf);
    },
    // An update re-embeds in place: a persisted index saved before it holds the old vector.
    changedSince: async (since) => {
      const rows = await em.fork().execute<{ id: string }[]>(`select "id" from "memory_items" where "updated_at" >= ? and "embedding_model" = ?`, [since, embeddingModel], 'all');
      return rows.map((row) => row.id);
    },
    feed,
  };
}
