import { Migration } from '@mikro-orm/migrations';

/** Endpoints, their deliveries and every attempt of each delivery. */
export class InitialSchema extends Migration {
  override up(): void {
    this.addSql(`create table "webhooks" (
      "id" text primary key,
      "tenant_id" text not null,
      "url" text not null,
      "events" text[] not null,
      "status" text not null constraint "webhooks_status_check" check ("status" in ('active', 'failed')),
      "description" text null,
      "metadata" text not null default '{}',
      "secret_sealed" text not null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      "failed_at" timestamptz null,
      "lease_until" timestamptz null
    )`);
    // The tenant's listing, newest first; and fan-out's "active endpoints of this tenant".
    this.addSql(`create index "webhooks_tenant_idx" on "webhooks" ("tenant_id", "created_at" desc, "id" desc)`);
    this.addSql(`create index "webhooks_fanout_idx" on "webhooks" ("tenant_id") where "status" = 'active'`);

    this.addSql(`create table "webhook_deliveries" (
      "id" text primary key,
      "tenant_id" text not null,
      "webhook_id" text not null references "webhooks" ("id") on delete cascade,
      "event_id" text not null,
      "event_type" text not null,
      "event_created_at" timestamptz not null,
      "payload" text not null,
      "status" text not null constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'delivered', 'failed')),
      "attempts" integer not null default 0,
      "max_attempts" integer not null,
      "fails_endpoint" boolean not null,
      "next_attempt_at" timestamptz null,
      "locked_until" timestamptz null,
      "lease_token" text null,
      "response_status" integer not null default 0,
      "response_time_ms" integer not null default 0,
      "error" text null,
      "delivered_at" timestamptz null,
      "created_at" timestamptz not null,
      "updated_at" timestamptz not null,
      constraint "webhook_deliveries_event_key" unique ("webhook_id", "event_id")
    )`);
    // The worker's scan for due work, and each endpoint's queue in emission order.
    this.addSql(`create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending'`);
    this.addSql(
      `create index "webhook_deliveries_queue_idx" on "webhook_deliveries" ("webhook_id", "event_created_at", "event_id") where "status" = 'pending'`,
    );
    this.addSql(`create index "webhook_deliveries_list_idx" on "webhook_deliveries" ("webhook_id", "created_at" desc, "id" desc)`);

    this.addSql(`create table "webhook_delivery_attempts" (
      "delivery_id" text not null references "webhook_deliveries" ("id") on delete cascade,
      "number" integer not null,
      "started_at" timestamptz not null,
      "response_status" integer not null,
      "response_time_ms" integer not null,
      "outcome" text not null constraint "webhook_delivery_attempts_outcome_check" check ("outcome" in ('delivered', 'failed')),
      "error" text null,
      "worker_id" text not null,
      constraint "webhook_delivery_attempts_pkey" primary key ("delivery_id", "number")
    )`);
  }
}
