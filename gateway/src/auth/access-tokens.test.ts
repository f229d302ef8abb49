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

function sign(key: CryptoKey, kid: string, sub: string, nowMs: number, ttlSeconds: number, claims: { iss?: string; aud?: string } = {}): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid })
    .setSubject(sub)
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(key);
}

/** A verifier over a key set the test changes, counting identity's GetJwks calls. */
function verifierOf(published: () => ProtoJwk[], options: { minRefreshIntervalMs: number; now: () => number }) {
  const fetches = { count: 0 };
  const verifier = new AccessTokenVerifier({
    fetchKeys: () => {
      fetches.count += 1;
      return Promise.resolve(published());
    },
    issuer: ISSUER,
    audience: AUDIENCE,
    ...options,
  });
  return { verifier, fetches };
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

  it('rejects a token of another issuer or for another audience, though its signature is good', async () => {
    const key = await signingKey('sgk_a');
    const verifier = new AccessTokenVerifier({ fetchKeys: () => Promise.resolve([key.jwk]), issuer: ISSUER, audience: AUDIENCE, minRefreshIntervalMs: 0 });
    await verifier.refresh();
    const now = Date.now();
    await expect(verifier.verify(await sign(key.privateKey, 'sgk_a', 'usr_1', now, 3600, { iss: 'someone-else' }))).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'The access token is invalid.',
    });
    await expect(verifier.verify(await sign(key.privateKey, 'sgk_a', 'usr_1', now, 3600, { aud: 'another-api' }))).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'The access token is invalid.',
    });
    await expect(verifier.verify(await sign(key.privateKey, 'sgk_a', 'usr_1', now, 3600))).resolves.toEqual({ userId: 'usr_1' });
  });

  it('refetches the key set when a token names an unknown kid (a rotation), and not for known kids', async () => {
    const old = await signingKey('sgk_old');
    const rotated = await signingKey('sgk_new');
    let published = [old.jwk];
    let now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const { verifier, fetches } = verifierOf(() => published, { minRefreshIntervalMs: 10_000, now: () => now });
    await verifier.refresh();
    await expect(verifier.verify(await sign(old.privateKey, 'sgk_old', 'usr_1', now, 3600))).resolves.toEqual({ userId: 'usr_1' });
    published = [rotated.jwk, old.jwk];
    now += 10_000;
    await expect(verifier.verify(await sign(rotated.privateKey, 'sgk_new', 'usr_2', now, 3600))).resolves.toEqual({ userId: 'usr_2' });
    expect(fetches.count).toBe(2);
    now += 10_000;
    await verifier.verify(await sign(old.privateKey, 'sgk_old', 'usr_3', now, 3600));
    await verifier.verify(await sign(rotated.privateKey, 'sgk_new', 'usr_4', now, 3600));
    expect(fetches.count).toBe(2);
  });

  it('throttles refetches for unknown kids to one per minRefreshIntervalMs', async () => {
    const known = await signingKey('sgk_a');
    const stranger = await signingKey('sgk_stranger');
    let now = Date.UTC(2026, 10, 22, 12, 0, 0);
    const { verifier, fetches } = verifierOf(() => [known.jwk], { minRefreshIntervalMs: 60_000, now: () => now });
    await verifier.refresh();
    for (let n = 0; n < 3; n += 1) {
      now += 10_000;
      const token = await sign(stranger.privateKey, 'sgk_stranger', 'usr_1', now, 3600);
      await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'unauthorized', message: 'The access token is signed with an unknown key.' });
    }
    expect(fetches.count).toBe(1);
    now += 30_000;
    await expect(verifier.verify(await sign(stranger.privateKey, 'sgk_stranger', 'usr_1', now, 3600))).rejects.toMatchObject({ code: 'unauthorized' });
    expect(fetches.count).toBe(2);
  });
});
