import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §16: every turn is a run, kept with its steps as they happen. Runs go with their
 * agent; a session's delete takes its runs too (they hold its messages' text). Listing is newest
 * first per agent, so the list's index is (agent, started_at, id) in that order; the time filters
 * and the cursor read it as a range.
 */
export class Runs extends Migration {
  override up(): void {
    this.addSql(`create table "runs" (
      "id" text primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "agent_version" integer not null,
      "session_id" text null,
      "user_id" text null,
      "trigger" text not null constraint "runs_trigger_check" check ("trigger" in ('chat', 'stream', 'background', 'mcp', 'workflow', 'agent', 'eval')),
      "status" text not null constraint "runs_status_check" check ("status" in ('queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled')),
      "input" text not null,
      "output" text null,
      "prompt_tokens" integer not null default 0,
      "completion_tokens" integer not null default 0,
      "total_tokens" integer not null default 0,
      "credits" integer not null default 0,
      "error_code" text null,
      "error_message" text null,
      "parent_run_id" text null,
      "trace_id" text null,
      "message_id" text null,
      "started_at" timestamptz not null,
      "completed_at" timestamptz null,
      "duration_ms" integer null,
      "feedback" jsonb null
    )`);
    this.addSql(`create index "runs_agent_started_idx" on "runs" ("agent_id", "started_at" desc, "id" desc)`);
    // Each filter of the list has its own, so a page and its (capped) count read only the runs
    // that match, not every run of the agent (test/bench/runs-list.ts).
    this.addSql(`create index "runs_agent_status_idx" on "runs" ("agent_id", "status", "started_at" desc, "id" desc)`);
    this.addSql(`create index "runs_agent_trigger_idx" on "runs" ("agent_id", "trigger", "started_at" desc, "id" desc)`);
    this.addSql(`create index "runs_agent_user_idx" on "runs" ("agent_id", "user_id", "started_at" desc, "id" desc)`);
    this.addSql(`create index "runs_agent_duration_idx" on "runs" ("agent_id", "duration_ms")`);
    this.addSql(`create index "runs_session_idx" on "runs" ("session_id", "started_at" desc, "id" desc) where "session_id" is not null`);
    // A turn that waited for a decision is continued by its user message: the run it belongs to.
    this.addSql(`create unique index "runs_message_key" on "runs" ("message_id") where "message_id" is not null`);
    this.addSql(`create index "runs_parent_idx" on "runs" ("parent_run_id") where "parent_run_id" is not null`);
    // Retention deletes the oldest first, across tenants.
    this.addSql(`create index "runs_started_idx" on "runs" ("started_at")`);

    this.addSql(`create table "run_steps" (
      "run_id" text not null references "runs" ("id") on delete cascade,
      "seq" integer not null,
      "type" text not null constraint "run_steps_type_check" check ("type" in ('retrieval', 'model', 'tool', 'approval', 'extraction')),
      "started_at" timestamptz not null,
      "duration_ms" integer not null,
      "data" jsonb not null,
      primary key ("run_id", "seq")
    )`);

    // A turn's extraction is a step of its run.
    this.addSql(`alter table "memory_extractions" add column "run_id" text null`);
  }
}
