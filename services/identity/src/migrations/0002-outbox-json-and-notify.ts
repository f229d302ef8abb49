import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox payload becomes `json`, which keeps the text as written (jsonb reorders keys), so the
 * relay publishes each event exactly as recorded, in envelope order; and an insert trigger
 * NOTIFYs the relay so it publishes within milliseconds of the commit. Written out rather than
 * taken from kit's OUTBOX_* constants, so this migration never changes after release.
 */
export class OutboxJsonAndNotify extends Migration {
  override up(): void {
    // Rows still waiting get their envelope keys back in envelope order.
    this.addSql(`alter table "outbox" alter column "payload" type json using json_build_object(
      'id', "payload"->'id', 'type', "payload"->'type', 'created_at', "payload"->'created_at',
      'data', "payload"->'data', 'tenant_id', "payload"->'tenant_id', 'api_version', "payload"->'api_version')`);
    this.addSql(`create or replace function "outbox_notify"() returns trigger language plpgsql as $$
    begin
      perform pg_notify('outbox_inserted', '');
      return null;
    end
    $$`);
    this.addSql(`create trigger "outbox_notify" after insert on "outbox" for each statement execute function "outbox_notify"()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "outbox_notify" on "outbox"`);
    this.addSql(`drop function if exists "outbox_notify"()`);
    this.addSql(`alter table "outbox" alter column "payload" type jsonb using "payload"::jsonb`);
  }
}
