import { Migration } from '@mikro-orm/migrations';

/** What a chat session taught its agent (GET /memory?session_id): its changes, found by session. */
export class MemoryBySession extends Migration {
  override up(): void {
    this.addSql(`create index "memory_history_session_idx" on "memory_history" ("session_id", "tenant_id", "agent_id") where "session_id" is not null`);
  }
}
