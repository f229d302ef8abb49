import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §17: documents from uploaded files and web pages, parsed in the background. A document
 * is work while `due_at` is set: `processing` until first parsed, then, for a page with
 * `refresh_seconds`, due again at each refresh. A replica leases it (`leased_by`, `leased_until`)
 * with `for update skip locked`, so one replica works on it per due time however many run; a
 * lease that runs out (a replica killed) lets another take it. The original is kept beside it.
 */
export class Documents extends Migration {
  override up(): void {
    this.addSql(`alter table "memory_documents"
      add column "source" text not null default 'text' constraint "memory_documents_source_check" check ("source" in ('text', 'upload', 'url')),
      add column "status" text not null default 'ready' constraint "memory_documents_status_check" check ("status" in ('processing', 'ready', 'failed')),
      add column "error" text null,
      add column "content_type" text null,
      add column "filename" text null,
      add column "bytes" bigint not null default 0,
      add column "pages" integer null,
      add column "url" text null,
      add column "refresh_seconds" integer null,
      add column "refreshed_at" timestamptz null,
      add column "metadata" jsonb not null default '{}',
      add column "user_id" text null,
      add column "content_hash" text null,
      add column "due_at" timestamptz null,
      add column "leased_by" text null,
      add column "leased_until" timestamptz null,
      add column "attempts" integer not null default 0`);
    // Documents that existed before were texts, chunked when they were added.
    this.addSql(`update "memory_documents" set "refreshed_at" = "created_at"`);
    this.addSql(`create index "memory_documents_agent_idx" on "memory_documents" ("tenant_id", "agent_id", "created_at" desc, "id" desc)`);
    // What the workers look through: only documents with work due.
    this.addSql(`create index "memory_documents_due_idx" on "memory_documents" ("due_at") where "due_at" is not null`);
    this.addSql(`create table "document_files" (
      "document_id" text primary key references "memory_documents" ("id") on delete cascade,
      "tenant_id" text not null,
      "content" bytea not null
    )`);
    // PDFs and DOCX are compressed already; stored as they are, a download reads a range at a time
    // without inflating the whole value.
    this.addSql(`alter table "document_files" alter column "content" set storage external`);
  }
}
