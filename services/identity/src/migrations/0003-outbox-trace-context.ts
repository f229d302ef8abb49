import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox keeps the W3C trace context of the request that recorded each event, so the relay
 * can hand it to consumers and their work joins that request's trace. Nullable: rows written
 * before this (and by code without a trace) simply start a new trace when consumed.
 */
export class OutboxTraceContext extends Migration {
  override up(): void {
    this.addSql(`alter table "outbox" add column "trace_context" json null`);
  }

  override down(): void {
    this.addSql(`alter table "outbox" drop column "trace_context"`);
  }
}
