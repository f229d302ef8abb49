import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { Batcher } from '@agent-platform/kit/work';
import { MAX_BATCH } from './execution-store.js';
import { nodeRecordOf, nodesJson, savedNodesOf, type NodeRecord, type NodeRow, type NodeWrite } from './node-records.js';

const parkStatement = new PreparedStatement<{ id: string }>('runner_park_executions', `
      with "rows" as (
         select * from jsonb_to_recordset(?::jsonb) as r("id" text, "wake_at" timestamptz)
       ), "parked" as (
         update "executions" e set "status" = 'waiting', "lease_owner" = null, "lease_until" = null, "wake_at" = coalesce(e."wake_at", r."wake_at")
         from "rows" r
         where e."id" = r."id" and e."lease_owner" = ? and e."status" = 'running'
         returning e."id"
       ), ${savedNodesOf('parked')}
       select "id" from "parked"`);

interface ParkWrite extends NodeWrite {
  wakeAt: Date;
}

/**
 * Executions that wait for a decision or a time (decisions §13.4): parking one this runner holds,
 * and completing its waiting nodes when their time has come. Parks are group-committed like the
 * store's writes; both change only executions this runner (`owner`) still holds running.
 */
export class WaitingExecutions {
  private readonly em: EntityManager;
  private readonly owner: string;
  private readonly parks: Batcher<ParkWrite, boolean>;

  /** `em` is the ORM's root manager; every operation runs in its own fork. `owner` is this runner's lease id. */
  constructor(em: EntityManager, options: { owner: string }) {
    this.em = em;
    this.owner = options.owner;
    this.parks = new Batcher((batch) => this.writeParks(batch), { maxBatch: MAX_BATCH });
  }

  /**
   * Parks a running execution this runner holds: its records are written, its lease given up, and
   * it sleeps until `wakeAt` — or at once when a decision landed while it ran, which left its own
   * earlier `wake_at` on the row (ExecutionsRepository.decide). A decision racing the park locks
   * the row: if it commits first, this update re-reads the row and keeps its `wake_at`; if it comes
   * second, it finds the execution waiting and wakes it (decisions §13.4). False when no longer held.
   */
  park(executionId: string, records: readonly NodeRecord[], wakeAt: Date): Promise<boolean> {
    return this.parks.submit({ executionId, records, wakeAt });
  }

  /**
   * Ends a waiting node whose time came (an approval timed out, a wait elapsed) with `record`,
   * unless a decision reached it first: answers the record that stands, or undefined when this
   * runner no longer holds the execution.
   */
  async settleWaiting(executionId: string, record: NodeRecord): Promise<NodeRecord | undefined> {
    const [row] = await this.em.fork().execute<NodeRow[]>(
      `with "held" as (
         select "id" from "executions" where "id" = ? and "lease_owner" = ? and "status" = 'running'
       ), "settled" as (
         update "node_executions" set "status" = ?, "completed_at" = ?::timestamptz, "duration_ms" = ?, "output" = ?::jsonb, "wake_at" = null
         where "execution_id" in (select "id" from "held") and "node_id" = ? and "status" = 'waiting'
         returning *
       )
       select * from "settled"
       union all
       select n.* from "node_executions" n where n."execution_id" in (select "id" from "held") and n."node_id" = ? and n."status" <> 'waiting'`,
      [executionId, this.owner, record.status, record.completedAt?.toISOString() ?? null, record.durationMs, JSON.stringify(record.output ?? null), record.nodeId, record.nodeId],
    );
    return row === undefined ? undefined : nodeRecordOf(row);
  }

  private async writeParks(batch: readonly ParkWrite[]): Promise<boolean[]> {
    const rows = batch.map(({ executionId, wakeAt }) => ({ id: executionId, wake_at: wakeAt.toISOString() }));
    const parked = await parkStatement.rows(this.em, [JSON.stringify(rows), this.owner, nodesJson(batch)]);
    const ids = new Set(parked.map((row) => row.id));
    return batch.map((write) => ids.has(write.executionId));
  }
}
