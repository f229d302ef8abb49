import { Migration } from '@mikro-orm/migrations';

/**
 * Model rounds stored and not yet charged (the process stopped between a turn's commit and its
 * charge, or identity kept refusing it): what the sweep of uncharged rounds reads, oldest first.
 */
export class UnchargedRounds extends Migration {
  override up(): void {
    this.addSql(`create index "chat_messages_uncharged_idx" on "chat_messages" ("created_at") where "credits" is not null and "charged_at" is null`);
  }
}
