import { Migration } from '@mikro-orm/migrations';

/**
 * Agents, their chat sessions and messages, memory items (with their embeddings: the index is
 * rebuilt from here) and documents. Everything an agent owns goes with it (ON DELETE CASCADE).
 */
export class InitialSchema extends Migration {
  override up(): void {
    this.addSql(`create table "agents" (
      "id" text primary key,
      "tenant_id" text not null,
      "name" text not null,
      "type" text not null,
      "description" text null,
      "memory_types" text[] not null,
      "config" jsonb not null default '{}',
      "status" text not null constraint "agents_status_check" check ("status" in ('active')),
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null
    )`);
    this.addSql(`create index "agents_tenant_idx" on "agents" ("tenant_id", "created_at" desc, "id" desc)`);

    this.addSql(`create table "chat_sessions" (
      "id" text primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "message_count" integer not null default 0,
      "consolidated_count" integer not null default 0,
      "created_at" timestamptz not null,
      "last_message_at" timestamptz null
    )`);
    this.addSql(`create index "chat_sessions_agent_idx" on "chat_sessions" ("agent_id", "created_at" desc, "id" desc)`);

    this.addSql(`create table "chat_messages" (
      "id" text primary key,
      "tenant_id" text not null,
      "session_id" text not null references "chat_sessions" ("id") on delete cascade,
      "role" text not null constraint "chat_messages_role_check" check ("role" in ('user', 'assistant')),
      "content" text not null,
      "prompt_tokens" integer null,
      "completion_tokens" integer null,
      "total_tokens" integer null,
      "model" text null,
      "credits" integer null,
      "charged_at" timestamptz null,
      "created_at" timestamptz not null
    )`);
    this.addSql(`create index "chat_messages_session_idx" on "chat_messages" ("session_id", "created_at", "id")`);

    this.addSql(`create table "memory_documents" (
      "id" text primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "title" text null,
      "chunks" integer not null,
      "created_at" timestamptz not null
    )`);

    this.addSql(`create table "memory_items" (
      "id" text primary key,
      "tenant_id" text not null,
      "agent_id" text not null references "agents" ("id") on delete cascade,
      "document_id" text null references "memory_documents" ("id") on delete cascade,
      "memory_type" text not null constraint "memory_items_type_check" check ("memory_type" in ('semantic', 'episodic', 'procedural')),
      "content" text not null,
      "metadata" jsonb not null default '{}',
      "embedding" bytea not null,
      "embedding_model" text not null,
      "created_at" timestamptz not null,
      "search_vector" tsvector generated always as (to_tsvector('simple', "content")) stored
    )`);
    this.addSql(`create index "memory_items_agent_idx" on "memory_items" ("agent_id", "created_at" desc, "id" desc)`);
    this.addSql(`create index "memory_items_document_idx" on "memory_items" ("document_id") where "document_id" is not null`);
    // Full-text half of hybrid search. 'simple': no stemming or stop words, so ids, names and
    // exact words match as typed. Stored, so ranking many matches reads vectors, not recomputes them.
    this.addSql(`create index "memory_items_search_idx" on "memory_items" using gin ("search_vector")`);
    this.addSql(`create index "memory_items_metadata_idx" on "memory_items" using gin ("metadata" jsonb_path_ops)`);

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
