import { Migration } from '@mikro-orm/migrations';

/**
 * A claim is fenced by a token on the endpoint it leases instead of one on each delivery it takes,
 * so claiming no longer writes every delivery row (one row version less per delivery). The
 * deliveries' own lease columns go: a dispatcher still running the previous version during a
 * rolling update fails its claims until it is replaced, and what it had in flight is sent again
 * once its lease expires (delivery is at least once).
 */
export class EndpointLeaseToken extends Migration {
  override up(): void {
    this.addSql(`alter table "webhooks" add column "lease_token" text null`);
    this.addSql(`alter table "webhook_deliveries" drop column "locked_until", drop column "lease_token"`);
  }

  override down(): void {
    this.addSql(`alter table "webhook_deliveries" add column "locked_until" timestamptz null, add column "lease_token" text null`);
    this.addSql(`alter table "webhooks" drop column "lease_token"`);
  }
}
