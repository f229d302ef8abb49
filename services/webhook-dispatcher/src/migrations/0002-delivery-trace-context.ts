import { Migration } from '@mikro-orm/migrations';

/**
 * Each delivery keeps the W3C trace context its event was fanned out in, so every attempt, however
 * much later, joins the trace of the request that caused the event. Nullable: deliveries queued
 * before this, replays and tests have none and each attempt starts its own trace.
 */
export class DeliveryTraceContext extends Migration {
  override up(): void {
    this.addSql(`alter table "webhook_deliveries" add column "trace_context" json null`);
  }

  override down(): void {
    this.addSql(`alter table "webhook_deliveries" drop column "trace_context"`);
  }
}
