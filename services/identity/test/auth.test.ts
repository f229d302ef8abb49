import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { AuthServiceService, type TokenPair } from '@agent-platform/proto/identity/v1/auth';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTestDatabase } from '@agent-platform/kit/testing';
import { describe, expect } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';
import { buildIdentityService } from '../src/service.js';
import { expectError, logger, silentBus, startService, test, testConfig, uniqueEmail, type IdentityHarness } from './harness.js';

async function login(identity: IdentityHarness, email: string, password: string): Promise<TokenPair> {
  const { tokens } = await identity.auth.login({ email, password });
  expect(tokens).toBeDefined();
  return tokens!;
}

async function elapsedMs(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run().catch(() => undefined);
  return performance.now() - started;
}

describe('Login', () => {
  test('returns a bearer token pair with the configured lifetimes', async ({ identity }) => {
    const user = await identity.register();
    const tokens = await login(identity, user.email, user.password);
    expect(tokens.expiresIn).toBe(3600);
    expect(tokens.refreshExpiresIn).toBe(2_592_000);
    expect(tokens.accessToken.split('.')).toHaveLength(3);
    expect(tokens.refreshToken).toMatch(/^rtk_[0-9A-Z]{26}\.[A-Za-z0-9_-]{43}$/);
  });

  test('accepts the e-mail in any case', async ({ identity }) => {
    const user = await identity.register();
    const [local, domain] = user.email.split('@') as [string, string];
    for (const email of [user.email.toUpperCase(), `${local.charAt(0).toUpperCase()}${local.slice(1)}@${domain.toUpperCase()}`]) {
      const { accessToken } = await login(identity, email, user.password);
      // Signed in as the user who registered the address, not merely signed in.
      expect(decodeJwt(accessToken).sub, email).toBe(user.id);
    }
  });

  test('answers a wrong password and an unknown e-mail with the same error', async ({ identity }) => {
    const user = await identity.register();
    const wrong = await expectError(identity.auth.login({ email: user.email, password: 'not the password' }), 'unauthorized');
    const unknown = await expectError(identity.auth.login({ email: uniqueEmail('nobody'), password: 'not the password' }), 'unauthorized');
    const malformed = await expectError(identity.auth.login({ email: 'nonsense', password: '' }), 'unauthorized');
    expect(unknown.message).toBe(wrong.message);
    expect(malformed.message).toBe(wrong.message);
  });

  test('spends password-hashing time on unknown e-mails too', async ({ identity }) => {
    const user = await identity.register();
    // Warm both paths once (the dummy hash is made lazily).
    await elapsedMs(() => identity.auth.login({ email: uniqueEmail(), password: 'x'.repeat(10) }));
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      wrong.push(await elapsedMs(() => identity.auth.login({ email: user.email, password: 'wrong password' })));
      unknown.push(await elapsedMs(() => identity.auth.login({ email: uniqueEmail(), password: 'wrong password' })));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    // Without the dummy verification an unknown e-mail answers in ~1 ms, a known one in tens of ms.
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.5);
  });

  test('refuses a deactivated user', async ({ identity }) => {
    const user = await identity.register();
    await identity.database.query('update users set is_active = false where id = $1', [user.id]);
    await expectError(identity.auth.login({ email: user.email, password: user.password }), 'unauthorized');
  });
});

describe('access tokens', () => {
  test('verify against GetJwks and carry identity only, no roles', async ({ identity }) => {
    const user = await identity.register();
    const { accessToken } = await login(identity, user.email, user.password);
    const { keys } = await identity.auth.getJwks({});
    expect(keys.length).toBeGreaterThanOrEqual(1);
    for (const key of keys) expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });

    const jwks = createLocalJWKSet({ keys: keys.map((key) => ({ ...key })) });
    const { payload, protectedHeader } = await jwtVerify(accessToken, jwks, {
      issuer: 'agent-platform',
      audience: 'agent-platform-api',
      algorithms: ['EdDSA'],
    });
    expect(protectedHeader.kid).toBe(keys[0]!.kid);
    expect(payload.sub).toBe(user.id);
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  test('keep their signing key across restarts and replicas', async ({ identity }) => {
    const before = await identity.auth.getJwks({});
    const replica = await identity.startReplica();
    const channel = new GrpcChannel(replica.address);
    try {
      const replicaAuth = channel.client(AuthServiceService);
      expect(await replicaAuth.getJwks({})).toEqual(before);
      const user = await identity.register();
      const { tokens } = await replicaAuth.login({ email: user.email, password: user.password });
      expect(decodeProtectedHeader(tokens!.accessToken).kid).toBe(before.keys[0]!.kid);
    } finally {
      channel.close();
    }
    const keys = await identity.database.query('select id from signing_keys');
    expect(keys).toHaveLength(1);
  });

  test('are signed with a private key stored only sealed; a key stored in clear before is sealed at start and keeps signing', async () => {
    const database = await createTestDatabase({ name: 'identity', migrations, migrate: (url) => openDatabase(url, logger).then((orm) => orm.close()) });
    const bus = silentBus();
    try {
      const first = await startService(database, bus);
      const [row] = await database.query<{ id: string; private_jwk: unknown; private_key_sealed: string }>('select id, private_jwk, private_key_sealed from signing_keys');
      expect(row!.private_jwk).toBeNull();
      expect(row!.private_key_sealed).toMatch(/^v1:[0-9a-f]{12}:/);
      await first.service.stop();

      // As a release before sealing stored it: the private JWK in clear, nothing sealed.
      const { privateKey } = generateKeyPairSync('ed25519');
      const clearJwk = privateKey.export({ format: 'jwk' });
      await database.query('update signing_keys set private_jwk = $1, private_key_sealed = null where id = $2', [JSON.stringify(clearJwk), row!.id]);
      const second = await startService(database, bus);
      try {
        const [upgraded] = await database.query<{ private_jwk: unknown; private_key_sealed: string | null }>('select private_jwk, private_key_sealed from signing_keys');
        expect(upgraded!.private_jwk).toBeNull();
        expect(upgraded!.private_key_sealed).not.toContain(String(clearJwk.d));
        const channel = new GrpcChannel(second.address);
        try {
          const auth = channel.client(AuthServiceService);
          const email = uniqueEmail('sealed');
          await auth.register({ email, password: 'a long enough password' });
          const { tokens } = await auth.login({ email, password: 'a long enough password' });
          // Signed with the key that was in clear: the upgrade kept the key, it only sealed it.
          const publicKey = createPublicKey(privateKey);
          const { protectedHeader } = await jwtVerify(tokens!.accessToken, publicKey, { algorithms: ['EdDSA'] });
          expect(protectedHeader.kid).toBe(row!.id);
        } finally {
          channel.close();
        }
      } finally {
        await second.service.stop();
      }
    } finally {
      await bus.close();
      await database.drop();
    }
  });

  test('are signed with one shared key when replicas start together on an empty database', async () => {
    const database = await createTestDatabase({ name: 'identity', migrations, migrate: (url) => openDatabase(url, logger).then((orm) => orm.close()) });
    const config = testConfig(database);
    const bus = silentBus();
    const replicas = await Promise.all([1, 2, 3].map(() => buildIdentityService(config, { logger, bus })));
    try {
      const ports = await Promise.all(replicas.map((replica) => replica.start()));
      const kids = await Promise.all(
        ports.map(async ({ port }) => {
          const channel = new GrpcChannel(`127.0.0.1:${port}`);
          try {
            const { keys } = await channel.client(AuthServiceService).getJwks({});
            return keys.map((key) => key.kid);
          } finally {
            channel.close();
          }
        }),
      );
      expect(new Set(kids.flat()).size).toBe(1);
      expect(await database.query('select id from signing_keys')).toHaveLength(1);
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await bus.close();
      await database.drop();
    }
  });
});

describe('Refresh', () => {
  test('rotates: the new pair works, the presented token is spent', async ({ identity }) => {
    const user = await identity.register();
    const first = await login(identity, user.email, user.password);
    const { tokens: second } = await identity.auth.refresh({ refreshToken: first.refreshToken });
    expect(second!.refreshToken).not.toBe(first.refreshToken);
    expect(second!.expiresIn).toBe(3600);
    const { tokens: third } = await identity.auth.refresh({ refreshToken: second!.refreshToken });
    expect(third!.accessToken).toBeTruthy();

    const rows = await identity.database.query<{ family_id: string; spent: boolean }>(
      'select family_id, spent_at is not null as spent from refresh_tokens where user_id = $1 order by created_at, id',
      [user.id],
    );
    expect(rows.map((row) => row.spent)).toEqual([true, true, false]);
    expect(new Set(rows.map((row) => row.family_id)).size).toBe(1);
  });

  test('revokes the whole family when a spent token is presented again', async ({ identity }) => {
    const user = await identity.register();
    const stolen = await login(identity, user.email, user.password);
    const { tokens: legitimate } = await identity.auth.refresh({ refreshToken: stolen.refreshToken });

    await expectError(identity.auth.refresh({ refreshToken: stolen.refreshToken }), 'unauthorized');
    // The newest token of the family is dead too; the user has to log in again.
    await expectError(identity.auth.refresh({ refreshToken: legitimate!.refreshToken }), 'unauthorized');

    // Another family (another login) is untouched.
    const other = await login(identity, user.email, user.password);
    await identity.auth.refresh({ refreshToken: other.refreshToken });
  });

  test('lets only one of two racing presentations of a token rotate it', async ({ identity }) => {
    const user = await identity.register();
    const { refreshToken } = await login(identity, user.email, user.password);
    const outcomes = await Promise.allSettled([identity.auth.refresh({ refreshToken }), identity.auth.refresh({ refreshToken })]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
  });

  test('refuses expired, unknown, tampered and malformed tokens', async ({ identity }) => {
    const user = await identity.register();
    const expired = await login(identity, user.email, user.password);
    await identity.database.query("update refresh_tokens set expires_at = now() - interval '1 second' where id = $1", [
      expired.refreshToken.split('.')[0],
    ]);
    await expectError(identity.auth.refresh({ refreshToken: expired.refreshToken }), 'unauthorized');

    const valid = await login(identity, user.email, user.password);
    const [id, secret] = valid.refreshToken.split('.') as [string, string];
    const tampered = `${id}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    await expectError(identity.auth.refresh({ refreshToken: tampered }), 'unauthorized');
    await expectError(identity.auth.refresh({ refreshToken: `rtk_01ARZ3NDEKTSV4RRFFQ69G5FAV.${secret}` }), 'unauthorized');
    await expectError(identity.auth.refresh({ refreshToken: 'garbage' }), 'unauthorized');
    // The tampered attempt did not spend the real token.
    await identity.auth.refresh({ refreshToken: valid.refreshToken });
  });

  test('stores only hashes of refresh tokens', async ({ identity }) => {
    const user = await identity.register();
    const { refreshToken } = await login(identity, user.email, user.password);
    const secret = refreshToken.split('.')[1]!;
    const rows = await identity.database.query<{ row: string }>('select r::text as row from refresh_tokens r where user_id = $1', [user.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toContain(secret);
  });
});
