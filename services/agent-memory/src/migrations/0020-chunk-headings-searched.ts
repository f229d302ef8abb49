import { Migration } from '@mikro-orm/migrations';
import { GIN_PENDING_LIST_KB } from './0007-short-gin-pending-lists.js';

/**
 * A document chunk is found by the words of its heading path as well as its content, as its
 * vector is made from both (memory/embedded-text.ts): the full-text column indexes the heading's
 * strings (a document's chunks only, and only a path's array: what `embeddedText` reads), then
 * the content. PostgreSQL 15 cannot change a generated column's expression, so the column and its
 * index are made again, which rewrites the table once.
 */
export const SEARCH_VECTOR_SQL = `(case when "document_id" is not null and jsonb_typeof("metadata"->'heading') = 'array'
    then to_tsvector('simple', "metadata"->'heading') else ''::tsvector end || to_tsvector('simple', "content"))`;

export class ChunkHeadingsSearched extends Migration {
  override up(): void {
    // Dropping the column drops memory_items_search_idx with it.
    this.addSql(`alter table "memory_items" drop column "search_vector"`);
    this.addSql(`alter table "memory_items" add column "search_vector" tsvector generated always as ${SEARCH_VECTOR_SQL} stored`);
    this.addSql(`create index "memory_items_search_idx" on "memory_items" using gin ("search_vector") with (gin_pending_list_limit = ${GIN_PENDING_LIST_KB})`);
  }
}
