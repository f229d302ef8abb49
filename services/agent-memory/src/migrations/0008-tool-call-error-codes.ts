import { Migration } from '@mikro-orm/migrations';

/** decisions §12: a call the platform refused for the turn's credential says why as a §2 code. */
export class ToolCallErrorCodes extends Migration {
  override up(): void {
    this.addSql(`alter table "tool_calls" add column "error_code" text null`);
  }
}
