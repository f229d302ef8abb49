import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §16: a background run is queued with the principal that asked for it (decisions §12:
 * it acts as them, never more) and what it asked for, then leased by one replica at a time. A
 * lease that runs out (its replica stopped) lets another replica take the run up again.
 */
export class BackgroundRuns extends Migration {
  override up(): void {
    this.addSql(`alter table "runs" add column "actor" jsonb null`);
    this.addSql(`alter table "runs" add column "request" jsonb null`);
    this.addSql(`alter table "runs" add column "lease_owner" text null`);
    this.addSql(`alter table "runs" add column "lease_until" timestamptz null`);
    this.addSql(`alter table "runs" add column "attempts" integer not null default 0`);
    // What the background workers look through: only runs still to do.
    this.addSql(`create index "runs_background_due_idx" on "runs" ("started_at") where "trigger" = 'background' and "status" in ('queued', 'running')`);
  }
}
