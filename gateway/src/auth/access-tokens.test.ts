import type { JsonWebKey as ProtoJwk } from '@agent-platform/proto/identity/v1/auth';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { AccessTokenVerifier } from './access-tokens.js';

const ISSUER = 'agent-platform';
const AUDIENCE = 'agent-platform-api';

async function signingKey(kid: string): Promise<{ privateKey: CryptoKey; jwk: ProtoJwk }> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const { x = '' } = await exportJWK(publicKey);
  return { privateKey, jwk: { kid, kty: 'OKP', crv: 'Ed25519', x, alg: 'EdDSA', use: 'sig' } };
}

function sign(key: CryptoKey, kid: string, sub: string, nowMs: number, ttlSeconds: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key);
}

describe('AccessTokenVerifier', () => {
  it('keeps rejecting a token once it expires, though it verified before', async () => {
    const key = await signingKey('sgk_a');
    let now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const verifier = new AccessTokenVerifier({ fetchKeys: () => Promise.resolve([key.jwk]), issuer: ISSUER, audience: AUDIENCE, minRefreshIntervalMs: 0, now: () => now });
    await verifier.refresh();
    const token = await sign(key.privateKey, 'sgk_a', 'usr_1', now, 60);
    await expect(verifier.verify(token)).resolves.toEqual({ userId: 'usr_1' });
    now += 30_000;
    await expect(verifier.verify(token)).resolves.toEqual({ userId: 'usr_1' });
    now += 31_000;
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unauthorized', message: 'The access token has expired.' });
  });

  it('rejects a verified token once its signing key is no longer published', async () => {
    const retired = await signingKey('sgk_old');
    const current = await signingKey('sgk_new');
    let published = [retired.jwk, current.jwk];
    const verifier = new AccessTokenVerifier({ fetchKeys: () => Promise.resolve(published), issuer: ISSUER, audience: AUDIENCE, minRefreshIntervalMs: 60_000 });
    await verifier.refresh();
    const token = await sign(retired.privateKey, 'sgk_old', 'usr_1', Date.now(), 3600);
    await expect(verifier.verify(token)).resolves.toEqual({ userId: 'usr_1' });
    published = [current.jwk];
    await verifier.refresh();
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unauthorized', message: 'The access token is signed with an unknown key.' });
  });

  it('does not let a forged token ride on a verified one', async () => {
    const key = await signingKey('sgk_a');
    const verifier = new AccessTokenVerifier({ fetchKeys: () => Promise.resolve([key.jwk]), issuer: ISSUER, audience: AUDIENCE, minRefreshIntervalMs: 0 });
    await verifier.refresh();
    const token = await sign(key.privateKey, 'sgk_a', 'usr_1', Date.now(), 3600);
    await verifier.verify(token);
    const [header, , signature] = token.split('.');
    const otherPayload = Buffer.from(JSON.stringify({ sub: 'usr_2', iss: ISSUER, aud: AUDIENCE, iat: 1, exp: 4_102_444_800 })).toString('base64url');
    await expect(verifier.verify(`${header}.${otherPayload}.${signature}`)).rejects.toMatchObject({ code: 'unauthorized' });
  });
});
