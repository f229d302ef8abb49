import { Migration } from '@mikro-orm/migrations';

/**
 * Executions may record trigger `tool`: an agent's workflow tool ran them during a chat turn
 * (decisions §12). The check is replaced rather than dropped, so the column still refuses what
 * no code path writes.
 */
export class ExecutionTriggerTool extends Migration {
  override up(): void {
    this.addSql(`alter table "executions" drop constraint "executions_trigger_check"`);
    this.addSql(`alter table "executions" add constraint "executions_trigger_check" check ("trigger" in ('manual', 'webhook', 'schedule', 'retry', 'tool'))`);
  }

  /** Fails while executions with trigger `tool` exist: they would break the narrower check. */
  override down(): void {
    this.addSql(`alter table "executions" drop constraint "executions_trigger_check"`);
    this.addSql(`alter table "executions" add constraint "executions_trigger_check" check ("trigger" in ('manual', 'webhook', 'schedule', 'retry'))`);
  }
}
