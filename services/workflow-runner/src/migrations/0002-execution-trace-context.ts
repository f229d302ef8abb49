import { Migration } from '@mikro-orm/migrations';

/**
 * An execution keeps the W3C trace context of the call that started it, so whichever runner runs
 * it (now, or after a takeover) runs its nodes, their calls and its finishing event in that trace.
 * Nullable: executions started before this, or outside any trace, run in a trace of their own.
 */
export class ExecutionTraceContext extends Migration {
  override up(): void {
    this.addSql(`alter table "executions" add column "trace_context" json null`);
  }

  override down(): void {
    this.addSql(`alter table "executions" drop column "trace_context"`);
  }
}
