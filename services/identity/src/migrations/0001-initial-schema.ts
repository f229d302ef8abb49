import { Migration } from '@mikro-orm/migrations';

/** Users, tenants and memberships; credentials (signing keys, refresh tokens, API keys); the ledger; the outbox. */
export class InitialSchema extends Migration {
  override up(): void {
    this.addSql(`create table "tenants" (
      "id" text primary key,
      "name" text not null,
      "plan" text not null constraint "tenants_plan_check" check ("plan" in ('free', 'pro', 'enterprise')),
      "balance" bigint not null default 0 constraint "tenants_balance_check" check ("balance" >= 0),
      "created_at" timestamptz not null default now()
    )`);

    this.addSql(`create table "users" (
      "id" text primary key,
      "email" text not null constraint "users_email_key" unique,
      "password_hash" text not null,
      "full_name" text not null default '',
      "is_active" boolean not null default true,
      "created_at" timestamptz not null default now()
    )`);

    this.addSql(`create table "memberships" (
      "tenant_id" text not null references "tenants" ("id") on delete cascade,
      "user_id" text not null references "users" ("id") on delete cascade,
      "role" text not null constraint "memberships_role_check" check ("role" in ('owner', 'admin', 'member', 'viewer')),
      "created_at" timestamptz not null default now(),
      constraint "memberships_pkey" primary key ("tenant_id", "user_id")
    )`);
    // A user's memberships in creation order: the first is the default tenant.
    this.addSql(`create index "memberships_user_idx" on "memberships" ("user_id", "created_at")`);

    this.addSql(`create table "signing_keys" (
      "id" text primary key,
      "public_jwk" jsonb not null,
      "private_jwk" jsonb not null,
      "created_at" timestamptz not null default now(),
      "retired_at" timestamptz null
    )`);

    this.addSql(`create table "refresh_tokens" (
      "id" text primary key,
      "family_id" text not null,
      "user_id" text not null references "users" ("id") on delete cascade,
      "token_hash" text not null,
      "created_at" timestamptz not null default now(),
      "expires_at" timestamptz not null,
      "spent_at" timestamptz null,
      "revoked_at" timestamptz null
    )`);
    this.addSql(`create index "refresh_tokens_family_idx" on "refresh_tokens" ("family_id")`);
    this.addSql(`create index "refresh_tokens_user_idx" on "refresh_tokens" ("user_id")`);

    this.addSql(`create table "api_keys" (
      "id" text primary key,
      "tenant_id" text not null references "tenants" ("id") on delete cascade,
      "created_by" text not null references "users" ("id") on delete cascade,
      "name" text not null,
      "key_prefix" text not null,
      "key_hash" text not null constraint "api_keys_key_hash_key" unique,
      "scopes" text[] not null,
      "expires_at" timestamptz null,
      "created_at" timestamptz not null default now(),
      "last_used_at" timestamptz null,
      "revoked_at" timestamptz null
    )`);
    // The tenant's listing: live keys, newest first.
    this.addSql(`create index "api_keys_tenant_idx" on "api_keys" ("tenant_id", "created_at" desc, "id" desc) where "revoked_at" is null`);

    this.addSql(`create table "credit_transactions" (
      "id" text primary key,
      "tenant_id" text not null references "tenants" ("id") on delete cascade,
      "amount" bigint not null,
      "balance_after" bigint not null constraint "credit_transactions_balance_after_check" check ("balance_after" >= 0),
      "kind" text not null constraint "credit_transactions_kind_check" check ("kind" in ('welcome_grant', 'purchase', 'usage')),
      "description" text not null default '',
      "reference" text null,
      "created_at" timestamptz not null default now(),
      constraint "credit_transactions_reference_key" unique ("tenant_id", "reference")
    )`);
    this.addSql(`create index "credit_transactions_tenant_idx" on "credit_transactions" ("tenant_id", "created_at" desc, "id" desc)`);

    this.addSql(`create table "purchases" (
      "id" text primary key,
      "tenant_id" text not null references "tenants" ("id") on delete cascade,
      "created_by" text not null references "users" ("id"),
      "credits" bigint not null constraint "purchases_credits_check" check ("credits" > 0),
      "status" text not null constraint "purchases_status_check" check ("status" in ('pending', 'completed', 'failed')),
      "provider" text not null,
      "provider_reference" text null,
      "created_at" timestamptz not null default now(),
      "completed_at" timestamptz null
    )`);
    this.addSql(`create index "purchases_tenant_idx" on "purchases" ("tenant_id", "created_at" desc)`);

    // The outbox as first released, frozen here: kit's OUTBOX_TABLE_SQL has moved on since, and
    // 0002 brings databases made by this migration up to it.
    this.addSql(`create table "outbox" (
      "id" text primary key,
      "subject" text not null,
      "payload" jsonb not null,
      "created_at" timestamptz not null default now(),
      "published_at" timestamptz null
    )`);
    this.addSql(`create index "outbox_unpublished_idx" on "outbox" ("created_at", "id") where "published_at" is null`);
  }

  override down(): void {
    for (const table of ['outbox', 'purchases', 'credit_transactions', 'api_keys', 'refresh_tokens', 'signing_keys', 'memberships', 'users', 'tenants']) {
      this.addSql(`drop table if exists "${table}"`);
    }
  }
}
