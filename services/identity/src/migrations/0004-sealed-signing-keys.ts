import { Migration } from '@mikro-orm/migrations';

/**
 * Private signing keys are kept sealed (AES-256-GCM under JWT_KEY_ENCRYPTION_KEY) instead of in
 * clear. SQL cannot encrypt with a key it does not have, so keys written before this stay in
 * `private_jwk` until the service's first start seals them and clears that column.
 */
export class SealedSigningKeys extends Migration {
  override up(): void {
    this.addSql(`alter table "signing_keys" add column "private_key_sealed" text null`);
    this.addSql(`alter table "signing_keys" alter column "private_jwk" drop not null`);
    this.addSql(`alter table "signing_keys" add constraint "signing_keys_private_key_check" check ("private_key_sealed" is not null or "private_jwk" is not null)`);
  }

  override down(): void {
    this.addSql(`alter table "signing_keys" drop constraint "signing_keys_private_key_check"`);
    this.addSql(`alter table "signing_keys" drop column "private_key_sealed"`);
  }
}
