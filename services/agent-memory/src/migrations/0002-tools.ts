import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §12: tools of a tenant, and the agents' list of them. Header values inside `config`
 * are sealed. An agent's `tools` holds ids without a foreign key (an array cannot have one):
 * deleting a tool removes its id from the agents in the same transaction.
 */
export class Tools extends Migration {
  override up(): void {
    this.addSql(`create table "tools" (
      "id" text primary key,
      "tenant_id" text not null,
      "name" text not null,
      "description" text null,
      "type" text not null constraint "tools_type_check" check ("type" in ('http', 'workflow')),
      "config" jsonb not null,
      "input_schema" jsonb not null,
      "requires_approval" boolean not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null
    )`);
    this.addSql(`create unique index "tools_tenant_name_key" on "tools" ("tenant_id", "name")`);
    this.addSql(`create index "tools_tenant_idx" on "tools" ("tenant_id", "created_at" desc, "id" desc)`);
    this.addSql(`alter table "agents" add column "tools" text[] not null default '{}'`);
  }
}
