import { defineEntity, p } from '@mikro-orm/postgresql';

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    /** The creating user; the key acts with this user's current role in the tenant. */
    createdBy: p.string(),
    name: p.string(),
    /** First 12 characters of the secret, shown in lists. */
    keyPrefix: p.string(),
    /** Hex SHA-256 of the secret (`api_keys_key_hash_key`); the secret is never stored. */
    keyHash: p.string().hidden(),
    scopes: p.array(),
    expiresAt: p.datetime().strictNullable(),
    createdAt: p.datetime(),
    lastUsedAt: p.datetime().strictNullable(),
    revokedAt: p.datetime().strictNullable(),
  },
});

export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
