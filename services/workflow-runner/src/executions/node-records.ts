import type { StoredNodeStatus } from './executions.entity.js';

/** What a run recorded of one node, as written to and read from `node_executions`. */
export interface NodeRecord {
  nodeId: string;
  status: StoredNodeStatus;
  startedAt: Date | null;
  completedAt: Date | null;
  durationMs: number | null;
  output: unknown;
  error: string | null;
  /** Runs so far: 0 when skipped, 1 for one try, more after retries. */
  attempts: number;
  /** A waiting node: when its approval times out or its wait ends. */
  wakeAt: Date | null;
}

/** An execution's node records, as one write carries them. */
export interface NodeWrite {
  executionId: string;
  records: readonly NodeRecord[];
}

export interface NodeRow {
  execution_id: string;
  node_id: string;
  status: StoredNodeStatus;
  started_at: Date | null;
  completed_at: Date | null;
  duration_ms: number | null;
  output: unknown;
  error: string | null;
  attempts: number;
  wake_at: Date | null;
}

/** Node records as one JSON parameter, unpacked in SQL by jsonb_to_recordset. */
const NODE_RECORDSET = `jsonb_to_recordset(?::jsonb) as n("execution_id" text, "node_id" text, "status" text, "started_at" timestamptz, "completed_at" timestamptz, "duration_ms" integer, "output" jsonb, "error" text,
  "attempts" integer, "wake_at" timestamptz)`;
const NODE_COLUMNS = `"execution_id", "node_id", "status", "started_at", "completed_at", "duration_ms", "output", "error", "attempts", "wake_at"`;
const NODE_UPSERT = `on conflict ("execution_id", "node_id") do update set "status" = excluded."status", "started_at" = excluded."started_at",
  "completed_at" = excluded."completed_at", "duration_ms" = excluded."duration_ms", "output" = excluded."output", "error" = excluded."error",
  "attempts" = excluded."attempts", "wake_at" = excluded."wake_at"`;

/** The CTE that upserts the node records of the JSON parameter (`nodesJson`) whose executions `held` (a CTE's name) lists. */
export function savedNodesOf(held: string): string {
  return `"saved" as (
         insert into "node_executions" (${NODE_COLUMNS})
         select n.* from ${NODE_RECORDSET} where n."execution_id" in (select "id" from "${held}")
         ${NODE_UPSERT}
       )`;
}

/** The JSON parameter `savedNodesOf` reads. */
export function nodesJson(writes: readonly NodeWrite[]): string {
  return JSON.stringify(
    writes.flatMap(({ executionId, records }) =>
      records.map((record) => ({
        execution_id: executionId,
        node_id: record.nodeId,
        status: record.status,
        started_at: record.startedAt?.toISOString() ?? null,
        completed_at: record.completedAt?.toISOString() ?? null,
        duration_ms: record.durationMs,
        output: record.output ?? null,
        error: record.error,
        attempts: record.attempts,
        wake_at: record.wakeAt?.toISOString() ?? null,
      })),
    ),
  );
}

export function nodeRecordOf(row: NodeRow): NodeRecord {
  return {
    nodeId: row.node_id,
    status: row.status,
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at),
    durationMs: row.duration_ms,
    output: row.output,
    error: row.error,
    attempts: row.attempts,
    wakeAt: row.wake_at === null ? null : new Date(row.wake_at),
  };
}
