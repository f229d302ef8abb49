import { Migration } from '@mikro-orm/migrations';

/**
 * Issue 43: when the embedder changes (the hybrid one replacing `hashing`), items are re-embedded
 * in place in the background (memory/reembedding.ts), with no history entry: their content is
 * unchanged. Each such update records its transaction, as history entries do theirs (0009), and
 * the vector feed reads both: every replica's embedded index learns of vectors another replica
 * re-embedded. Only re-embedded items carry one, so the index holds those alone.
 */
export class MemoryReembedding extends Migration {
  override up(): void {
    this.addSql(`alter table "memory_items" add column "embedded_xact" xid8 null`);
    this.addSql(`create index "memory_items_embedded_xact_idx" on "memory_items" ("agent_id", "embedded_xact") where "embedded_xact" is not null`);
  }
}
