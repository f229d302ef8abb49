import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §13: executions and nodes may be `waiting` (an approval or a wait node), parked with
 * no lease until `wake_at`; node executions count their `attempts` (retries). A waiting
 * execution's `wake_at` is the earliest of its waiting nodes' (or now, once one is decided), and
 * the claim finds it by the partial index below, so thousands parked cost a claim nothing.
 */
export class WaitingAndRetries extends Migration {
  override up(): void {
    this.addSql(`alter table "executions" drop constraint "executions_status_check"`);
    this.addSql(`alter table "executions" add constraint "executions_status_check" check ("status" in ('running', 'waiting', 'completed', 'failed', 'cancelled'))`);
    this.addSql(`alter table "executions" add column "wake_at" timestamptz null`);
    this.addSql(`create index "executions_wake_idx" on "executions" ("wake_at") where "status" = 'waiting'`);

    this.addSql(`alter table "node_executions" drop constraint "node_executions_status_check"`);
    this.addSql(`alter table "node_executions" add constraint "node_executions_status_check" check ("status" in ('running', 'waiting', 'completed', 'failed', 'skipped'))`);
    this.addSql(`alter table "node_executions" add column "wake_at" timestamptz null`);
    // Every node recorded so far ran once, or not at all when skipped.
    this.addSql(`alter table "node_executions" add column "attempts" integer not null default 0`);
    this.addSql(`update "node_executions" set "attempts" = 1 where "status" <> 'skipped'`);
  }
}
