import { Migration } from '@mikro-orm/migrations';

/**
 * What memories each model round was given, kept with its answer, so a session read back shows
 * them as the live turn did (the console's playground after a reload). Earlier rounds: null.
 */
export class TurnMemories extends Migration {
  override up(): void {
    this.addSql(`alter table "chat_messages" add column "memories" jsonb null`);
  }
}
