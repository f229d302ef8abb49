import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §16: an agent's settings (config, tools, memory_types) are kept as numbered versions,
 * as workflows keep their graphs (§13.1). Existing agents become version 1 with their current
 * settings, dated by their last change (`updated_at`); who made that change was never recorded, so
 * their `created_by` is null.
 */
export class AgentVersions extends Migration {
  override up(): void {
    this.addSql(`create table "agent_versions" (
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "version" integer not null constraint "agent_versions_version_check" check ("version" >= 1),
      "tenant_id" text not null,
      "memory_types" text[] not null,
      "config" jsonb not null,
      "tools" text[] not null,
      "created_at" timestamptz not null,
      "created_by" text null,
      primary key ("agent_id", "version")
    )`);
    // Added with a default so existing rows get 1 without a rewrite; new rows always say theirs.
    this.addSql(`alter table "agents" add column "version" integer not null default 1`);
    this.addSql(`alter table "agents" alter column "version" drop default`);
    this.addSql(`insert into "agent_versions" ("agent_id", "version", "tenant_id", "memory_types", "config", "tools", "created_at", "created_by")
      select "id", 1, "tenant_id", "memory_types", "config", "tools", "updated_at", null from "agents"`);
  }
}
