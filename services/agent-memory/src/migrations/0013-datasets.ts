import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §16: datasets of a tenant and their items, which evals run as agent turns. A dataset
 * keeps its item count, changed in the transaction that adds or deletes items, so lists and pages
 * need no count over a table that may hold many items. Items go with their dataset (cascade).
 */
export class Datasets extends Migration {
  override up(): void {
    this.addSql(`create table "datasets" (
      "id" text primary key,
      "tenant_id" text not null,
      "name" text not null,
      "description" text null,
      "item_count" integer not null default 0,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null
    )`);
    this.addSql(`create index "datasets_tenant_idx" on "datasets" ("tenant_id", "created_at" desc, "id" desc)`);
    this.addSql(`create table "dataset_items" (
      "id" text primary key,
      "tenant_id" text not null,
      "dataset_id" text not null references "datasets" ("id") on delete cascade,
      "input" jsonb not null,
      "expected" text null,
      "metadata" jsonb null,
      "created_at" timestamptz not null
    )`);
    this.addSql(`create index "dataset_items_dataset_idx" on "dataset_items" ("dataset_id", "created_at" desc, "id" desc)`);
  }
}
