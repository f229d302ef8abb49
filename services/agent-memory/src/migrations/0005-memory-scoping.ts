import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §14: memory that manages itself. Items and sessions may belong to an end user of the
 * tenant's application (`user_id`; null: shared). Every change of an item is recorded in
 * `memory_history`, which outlives the item (no key to it) but not its agent; the items stored so
 * far get their ADD entry here, so every item has a history from its first day. Each finished turn
 * of an agent that extracts queues one row in `memory_extractions`, written in the turn's own
 * transaction and worked off by a leased loop.
 */
export class MemoryScoping extends Migration {
  override up(): void {
    this.addSql(`alter table "memory_items" add column "user_id" text null`);
    this.addSql(`alter table "memory_items" add column "updated_at" timestamptz null`);
    this.addSql(`create index "memory_items_user_idx" on "memory_items" ("agent_id", "user_id", "created_at" desc, "id" desc) where "user_id" is not null`);
    // Where a persisted vector index finds the items re-embedded while it was not saving.
    this.addSql(`create index "memory_items_updated_idx" on "memory_items" ("updated_at") where "updated_at" is not null`);
    this.addSql(`alter table "chat_sessions" add column "user_id" text null`);

    this.addSql(`create table "memory_history" (
      "seq" bigserial primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "memory_id" text not null,
      "event" text not null constraint "memory_history_event_check" check ("event" in ('ADD', 'UPDATE', 'DELETE')),
      "old_content" text null,
      "new_content" text null,
      "source" text not null constraint "memory_history_source_check" check ("source" in ('api', 'extraction', 'consolidation', 'document')),
      "session_id" text null,
      "created_at" timestamptz not null
    )`);
    this.addSql(`create index "memory_history_item_idx" on "memory_history" ("memory_id", "seq")`);
    this.addSql(`insert into "memory_history" ("tenant_id", "agent_id", "memory_id", "event", "new_content", "source", "session_id", "created_at")
      select "tenant_id", "agent_id", "id", 'ADD', "content",
        case when "document_id" is not null then 'document' when "metadata" ->> 'source' = 'consolidation' then 'consolidation' else 'api' end,
        case when "metadata" ->> 'source' = 'consolidation' then "metadata" ->> 'session_id' end,
        "created_at"
      from "memory_items" order by "created_at", "id"`);

    this.addSql(`create table "memory_extractions" (
      "message_id" text primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "session_id" text not null references "chat_sessions" ("id") on delete cascade,
      "user_id" text null,
      "actor" jsonb not null,
      "status" text not null constraint "memory_extractions_status_check" check ("status" in ('pending', 'done', 'failed')),
      "attempts" integer not null default 0,
      "due_at" timestamptz not null,
      "leased_by" text null,
      "leased_until" timestamptz null,
      "last_error" text null,
      "added" integer null,
      "updated" integer null,
      "deleted" integer null,
      "credits" integer null,
      "charged_at" timestamptz null,
      "created_at" timestamptz not null,
      "finished_at" timestamptz null
    )`);
    this.addSql(`create index "memory_extractions_due_idx" on "memory_extractions" ("due_at") where "status" = 'pending'`);
  }
}
