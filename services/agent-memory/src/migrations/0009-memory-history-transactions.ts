import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §18.6: each history entry records the transaction that wrote it, so a replica's
 * embedded index can ask for exactly the changes its last look at the database could not see
 * (`pg_visible_in_snapshot`), whatever order transactions committed in. Entries written before
 * stay null: every index opened after this migration has read them from the items themselves.
 */
export class MemoryHistoryTransactions extends Migration {
  override up(): void {
    this.addSql(`alter table "memory_history" add column "xact" xid8 null`);
    this.addSql(`alter table "memory_history" alter column "xact" set default pg_current_xact_id()`);
    this.addSql(`create index "memory_history_xact_idx" on "memory_history" ("agent_id", "xact") where "xact" is not null`);
  }
}
