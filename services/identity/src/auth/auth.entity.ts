import type { JsonWebKey } from 'node:crypto';
import { defineEntity, p } from '@mikro-orm/postgresql';

/** An Ed25519 key pair that signs access tokens; `kid` is its id. */
export const SigningKeySchema = defineEntity({
  name: 'SigningKey',
  tableName: 'signing_keys',
  properties: {
    id: p.string().primary(),
    publicJwk: p.json<JsonWebKey>(),
    /** The private JWK as JSON, sealed by SecretBox with the key id as associated data. */
    privateKeySealed: p.text().hidden().strictNullable(),
    /** Only on keys written before sealing; the first start seals them and clears this. */
    privateJwk: p.json<JsonWebKey>().hidden().strictNullable(),
    createdAt: p.datetime(),
    /** Set once tokens it signed can no longer be valid; retired keys leave the JWKS. */
    retiredAt: p.datetime().strictNullable(),
  },
});

export class SigningKey extends SigningKeySchema.class {}
SigningKeySchema.setClass(SigningKey);

/**
 * One refresh token. Rotation spends it and issues the next one in the same family; presenting a
 * spent token revokes every token of its family (reuse detection).
 */
export const RefreshTokenSchema = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_tokens',
  properties: {
    id: p.string().primary(),
    familyId: p.string(),
    userId: p.string(),
    /** Hex SHA-256 of the secret part; the secret itself is never stored. */
    tokenHash: p.string().hidden(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
    spentAt: p.datetime().strictNullable(),
    revokedAt: p.datetime().strictNullable(),
  },
});

export class RefreshToken extends RefreshTokenSchema.class {}
RefreshTokenSchema.setClass(RefreshToken);
