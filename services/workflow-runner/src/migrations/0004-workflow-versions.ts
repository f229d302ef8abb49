import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §13.1: every graph a workflow has had is kept as a numbered version, the workflow
 * shows its current one and an execution records the one it runs. Existing workflows become
 * version 1 with their current graph (their last edit, so `created_at` is `updated_at`), and
 * existing executions say version 1: the graph each of them ran is still in its own `graph`.
 */
export class WorkflowVersions extends Migration {
  override up(): void {
    this.addSql(`create table "workflow_versions" (
      "workflow_id" text not null references "workflows" ("id") on delete cascade,
      "version" integer not null constraint "workflow_versions_version_check" check ("version" >= 1),
      "nodes" jsonb not null,
      "edges" jsonb not null,
      "created_at" timestamptz not null,
      "created_by" text not null,
      primary key ("workflow_id", "version")
    )`);
    // Added with a default so existing rows get 1 without a rewrite; new rows always say theirs.
    this.addSql(`alter table "workflows" add column "version" integer not null default 1`);
    this.addSql(`alter table "workflows" alter column "version" drop default`);
    this.addSql(`insert into "workflow_versions" ("workflow_id", "version", "nodes", "edges", "created_at", "created_by")
      select "id", 1, "nodes", "edges", "updated_at", "created_by" from "workflows"`);
    this.addSql(`alter table "executions" add column "workflow_version" integer not null default 1`);
    this.addSql(`alter table "executions" alter column "workflow_version" drop default`);
    // An execution names a version that exists; both go when the workflow does.
    this.addSql(`alter table "executions" add constraint "executions_workflow_version_fkey"
      foreign key ("workflow_id", "workflow_version") references "workflow_versions" ("workflow_id", "version") on delete cascade`);
  }

  override down(): void {
    this.addSql(`alter table "executions" drop column "workflow_version"`);
    this.addSql(`alter table "workflows" drop column "version"`);
    this.addSql(`drop table "workflow_versions"`);
  }
}
