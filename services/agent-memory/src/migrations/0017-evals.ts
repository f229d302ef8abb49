import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §16: an eval runs each item of a dataset as a run of an agent (trigger `eval`) and
 * scores what it answered. Its results copy the item (input, expected) and, once scored, the run's
 * figures: the dataset may change or go, and runs go after RUN_RETENTION_DAYS, while an eval stays
 * comparable. A result is `pending` (no run yet), `running` (its run queued or running), `scoring`
 * (leased to one replica's scorer until `lease_until`) or `scored`.
 */
export class Evals extends Migration {
  override up(): void {
    this.addSql(`create table "evals" (
      "id" text primary key,
      "tenant_id" text not null,
      "dataset_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "agent_version" integer not null,
      "scorers" jsonb not null,
      "concurrency" integer not null,
      "status" text not null,
      "item_count" integer not null,
      "actor" jsonb not null,
      "created_at" timestamptz not null,
      "completed_at" timestamptz null
    )`);
    this.addSql(`create index "evals_tenant_idx" on "evals" ("tenant_id", "created_at" desc, "id" desc)`);
    // What the scorers look through for evals to feed: only those still running.
    this.addSql(`create index "evals_running_idx" on "evals" ("created_at") where "status" = 'running'`);
    this.addSql(`create table "eval_results" (
      "eval_id" text not null references "evals" ("id") on delete cascade,
      "position" integer not null,
      "item_id" text not null,
      "input" jsonb not null,
      "expected" text null,
      "state" text not null,
      "run_id" text null references "runs" ("id") on delete set null,
      "lease_until" timestamptz null,
      "run_status" text null,
      "output" text null,
      "error" jsonb null,
      "scores" jsonb null,
      "passed" boolean null,
      "duration_ms" integer null,
      "total_tokens" integer null,
      "credits" integer null,
      "scored_at" timestamptz null,
      primary key ("eval_id", "position")
    )`);
    this.addSql(`create index "eval_results_item_idx" on "eval_results" ("eval_id", "item_id")`);
    this.addSql(`create index "eval_results_open_idx" on "eval_results" ("eval_id", "state", "position") where "state" <> 'scored'`);
    this.addSql(`create index "eval_results_run_idx" on "eval_results" ("run_id") where "state" in ('running', 'scoring')`);
    // What the hourly sweep of runs left running by a stopped process looks through.
    this.addSql(`create index "runs_running_idx" on "runs" ("started_at") where "status" = 'running'`);
    // Eval runs are claimed by the background workers, as background runs are.
    this.addSql(`drop index "runs_background_due_idx"`);
    this.addSql(`create index "runs_background_due_idx" on "runs" ("started_at") where "trigger" in ('background', 'eval') and "status" in ('queued', 'running')`);
  }
}
