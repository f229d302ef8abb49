import { Migration } from '@mikro-orm/migrations';

/**
 * Workflows, their executions and each execution's node results. An execution carries the graph
 * it started with, so editing a workflow never changes a run in flight, and its lease (owner and
 * expiry), so any replica can take over a run whose runner died.
 */
export class InitialSchema extends Migration {
  override up(): void {
    this.addSql(`create table "workflows" (
      "id" text primary key,
      "tenant_id" text not null,
      "name" text not null,
      "description" text null,
      "status" text not null constraint "workflows_status_check" check ("status" in ('draft', 'active', 'paused')),
      "trigger_type" text not null constraint "workflows_trigger_type_check" check ("trigger_type" in ('webhook', 'schedule', 'manual')),
      "nodes" jsonb not null,
      "edges" jsonb not null,
      "webhook_path" text null,
      "schedule_cron" text null,
      "schedule_timezone" text null,
      "created_by" text not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null
    )`);
    this.addSql(`create index "workflows_tenant_idx" on "workflows" ("tenant_id", "created_at" desc, "id" desc)`);
    this.addSql(`create index "workflows_schedule_idx" on "workflows" ("id") where "status" = 'active' and "schedule_cron" is not null`);

    this.addSql(`create table "executions" (
      "id" text primary key,
      "tenant_id" text not null,
      "workflow_id" text not null references "workflows" ("id") on delete cascade,
      "status" text not null constraint "executions_status_check" check ("status" in ('running', 'completed', 'failed', 'cancelled')),
      "trigger" text not null constraint "executions_trigger_check" check ("trigger" in ('manual', 'webhook', 'schedule', 'retry')),
      "graph" jsonb not null,
      "input" jsonb not null,
      "request" jsonb null,
      "output" jsonb null,
      "error" jsonb null,
      "started_at" timestamptz not null,
      "completed_at" timestamptz null,
      "duration_ms" integer null,
      "deadline_at" timestamptz not null,
      "lease_owner" text null,
      "lease_until" timestamptz null,
      "created_by" text not null
    )`);
    this.addSql(`create index "executions_workflow_idx" on "executions" ("workflow_id", "started_at" desc, "id" desc)`);
    this.addSql(`create index "executions_workflow_status_idx" on "executions" ("workflow_id", "status", "started_at" desc, "id" desc)`);
    // What a claim scans: running executions whose lease is free or has expired.
    this.addSql(`create index "executions_claim_idx" on "executions" ("lease_until" nulls first, "started_at") where "status" = 'running'`);
    this.addSql(`create index "executions_lease_owner_idx" on "executions" ("lease_owner") where "status" = 'running'`);

    this.addSql(`create table "node_executions" (
      "execution_id" text not null references "executions" ("id") on delete cascade,
      "node_id" text not null,
      "status" text not null constraint "node_executions_status_check" check ("status" in ('running', 'completed', 'failed', 'skipped')),
      "started_at" timestamptz null,
      "completed_at" timestamptz null,
      "duration_ms" integer null,
      "output" jsonb null,
      "error" text null,
      primary key ("execution_id", "node_id")
    )`);

    // One row per (workflow, tick): the unique key is what makes a tick start exactly one
    // execution however many runners saw it.
    this.addSql(`create table "schedule_ticks" (
      "workflow_id" text not null references "workflows" ("id") on delete cascade,
      "tick_at" timestamptz not null,
      "execution_id" text not null,
      primary key ("workflow_id", "tick_at")
    )`);

    this.addSql(`create table "outbox" (
      "id" text primary key,
      "subject" text not null,
      "payload" json not null,
      "trace_context" json null,
      "created_at" timestamptz not null,
      "published_at" timestamptz null
    )`);
    this.addSql(`create index "outbox_unpublished_idx" on "outbox" ("created_at", "id") where "published_at" is null`);
    // Written out, not imported: a migration is frozen once released (and test templates are
    // fingerprinted by migration code).
    this.addSql(`create or replace function "outbox_notify"() returns trigger language plpgsql as $$
    begin
      perform pg_notify('outbox_inserted', '');
      return null;
    end
    $$`);
    this.addSql(`create trigger "outbox_notify" after insert on "outbox" for each statement execute function "outbox_notify"()`);
  }
}
