import { isId } from '@agent-platform/kit';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect } from 'vitest';
import { expectError, test, userPrincipal, type IdentityHarness, type TestUser } from './harness.js';

const IN_A_DAY = () => new Date(Date.now() + 86_400_000);

async function createKey(identity: IdentityHarness, user: TestUser, name = 'ci', scopes = ['agents:read', 'workflows:execute']) {
  const { apiKey, secret } = await identity.apiKeys.createApiKey({ name, scopes }, { principal: user.principal });
  return { apiKey: apiKey!, secret };
}

describe('CreateApiKey', () => {
  test('returns the secret once, in the decisions §4 format, with its 12-character prefix', async ({ identity }) => {
    const owner = await identity.register();
    const expiresAt = IN_A_DAY();
    const { apiKey, secret } = await identity.apiKeys.createApiKey(
      { name: 'deploy bot', scopes: ['agents:read', 'agents:write'], expiresAt },
      { principal: owner.principal },
    );
    expect(secret).toMatch(/^ap_live_[0-9A-Za-z]{32}$/);
    expect(isId('apiKey', apiKey!.id)).toBe(true);
    expect(apiKey).toMatchObject({ name: 'deploy bot', keyPrefix: secret.slice(0, 12), scopes: ['agents:read', 'agents:write'], expiresAt });
    expect(apiKey!.lastUsedAt).toBeUndefined();
  });

  test('stores only a hash: the secret is nowhere in the table', async ({ identity }) => {
    const owner = await identity.register();
    const { apiKey, secret } = await createKey(identity, owner);
    const rows = await identity.database.query<{ row: string }>('select k::text as row from api_keys k where id = $1', [apiKey.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toContain(secret);
    expect(rows[0]!.row).not.toContain(secret.slice(12));
    const dump = await identity.database.query<{ row: string }>('select string_agg(k::text, chr(10)) as row from api_keys k');
    expect(dump[0]!.row).not.toContain(secret.slice(8));
  });

  test('names each invalid field', async ({ identity }) => {
    const owner = await identity.register();
    const error = await expectError(
      identity.apiKeys.createApiKey(
        { name: ' ', scopes: ['agents:read', 'agents:delete', 'everything'], expiresAt: new Date(Date.now() - 1_000) },
        { principal: owner.principal },
      ),
      'validation_error',
    );
    expect(error.details.map((d) => d.field)).toEqual(['name', 'scopes[1]', 'scopes[2]', 'expires_at']);
    const tooLong = await expectError(identity.apiKeys.createApiKey({ name: 'n'.repeat(101), scopes: ['*'] }, { principal: owner.principal }), 'validation_error');
    expect(tooLong.details.map((d) => d.field)).toEqual(['name']);
    await createKey(identity, owner, 'n'.repeat(100), ['*']);
  });

  test('is for users with the admin role or higher, never for API keys', async ({ identity }) => {
    const owner = await identity.register();
    const member = userPrincipal(owner.id, owner.tenantId, 'member');
    await expectError(identity.apiKeys.createApiKey({ name: 'x', scopes: ['*'] }, { principal: member }), 'forbidden');
    const key = { ...owner.principal, kind: PrincipalKind.KIND_API_KEY, apiKeyId: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    await expectError(identity.apiKeys.createApiKey({ name: 'x', scopes: ['*'] }, { principal: key }), 'forbidden');
    await expectError(identity.apiKeys.createApiKey({ name: 'x', scopes: ['*'] }), 'unauthorized');
  });
});

describe('ListApiKeys and RevokeApiKey', () => {
  test('list the tenant keys newest first, paginated, without revoked ones', async ({ identity }) => {
    const owner = await identity.register();
    const created = [];
    for (const name of ['one', 'two', 'three', 'four']) created.push((await createKey(identity, owner, name)).apiKey);
    await identity.apiKeys.revokeApiKey({ apiKeyId: created[1]!.id }, { principal: owner.principal });

    const all = await identity.apiKeys.listApiKeys({ page: undefined }, { principal: owner.principal });
    expect(all.total).toBe(3);
    expect(all.items.map((key) => key.name)).toEqual(['four', 'three', 'one']);
    expect(JSON.stringify(all)).not.toMatch(/ap_live_[0-9A-Za-z]{32}/);

    const second = await identity.apiKeys.listApiKeys({ page: { page: 2, perPage: 2 } }, { principal: owner.principal });
    expect(second).toMatchObject({ total: 3, items: [{ name: 'one' }] });
    const beyond = await identity.apiKeys.listApiKeys({ page: { page: 5, perPage: 2 } }, { principal: owner.principal });
    expect(beyond).toEqual({ total: 3, items: [] });
    const invalid = await expectError(identity.apiKeys.listApiKeys({ page: { page: 1, perPage: 101 } }, { principal: owner.principal }), 'validation_error');
    expect(invalid.details.map((d) => d.field)).toEqual(['per_page']);
  });

  test('revoke answers not_found for unknown, already revoked and other tenants\u2019 keys', async ({ identity }) => {
    const owner = await identity.register();
    const stranger = await identity.register();
    const { apiKey } = await createKey(identity, owner);
    await expectError(identity.apiKeys.revokeApiKey({ apiKeyId: apiKey.id }, { principal: stranger.principal }), 'not_found');
    await expectError(identity.apiKeys.revokeApiKey({ apiKeyId: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, { principal: owner.principal }), 'not_found');
    await identity.apiKeys.revokeApiKey({ apiKeyId: apiKey.id }, { principal: owner.principal });
    await expectError(identity.apiKeys.revokeApiKey({ apiKeyId: apiKey.id }, { principal: owner.principal }), 'not_found');
  });

  test('never show another tenant its neighbour\u2019s keys', async ({ identity }) => {
    const alice = await identity.register();
    const bob = await identity.register();
    await createKey(identity, alice, 'alice key');
    const { items, total } = await identity.apiKeys.listApiKeys({ page: undefined }, { principal: bob.principal });
    expect({ items, total }).toEqual({ items: [], total: 0 });
  });
});

describe('ConfirmApiKey', () => {
  test('answers by id what AuthenticateApiKey answers by secret, the role as it is now, and leaves last_used_at alone', async ({ identity }) => {
    const owner = await identity.register();
    const admin = await identity.register();
    await identity.members.addMember({ email: admin.email, role: 'admin' }, { principal: owner.principal });
    const { apiKey, secret } = await identity.apiKeys.createApiKey({ name: 'k', scopes: ['workflows:execute'] }, { principal: userPrincipal(admin.id, owner.tenantId, 'admin') });
    const authenticated = await identity.auth.authenticateApiKey({ secret });
    const stamp = async () => (await identity.database.query<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [apiKey!.id]))[0]!.last_used_at;
    await identity.database.query('update api_keys set last_used_at = null where id = $1', [apiKey!.id]);

    const { tenantId, userId, role, scopes } = authenticated;
    expect(await identity.auth.confirmApiKey({ apiKeyId: apiKey!.id })).toEqual({ tenantId, userId, role, scopes });
    expect(await stamp()).toBeNull();
    await identity.members.updateMember({ userId: admin.id, role: 'member' }, { principal: owner.principal });
    expect((await identity.auth.confirmApiKey({ apiKeyId: apiKey!.id })).role).toBe('member');
  });

  test('is unauthorized for an unknown or malformed id, and once the key is revoked, expired, or its creator gone', async ({ identity }) => {
    const owner = await identity.register();
    await expectError(identity.auth.confirmApiKey({ apiKeyId: 'key_01JD0000000000000000000000' }), 'unauthorized');
    await expectError(identity.auth.confirmApiKey({ apiKeyId: "' or 1=1 --" }), 'unauthorized');

    const revoked = await createKey(identity, owner);
    await identity.auth.confirmApiKey({ apiKeyId: revoked.apiKey.id });
    await identity.apiKeys.revokeApiKey({ apiKeyId: revoked.apiKey.id }, { principal: owner.principal });
    await expectError(identity.auth.confirmApiKey({ apiKeyId: revoked.apiKey.id }), 'unauthorized');

    const expired = await createKey(identity, owner);
    await identity.database.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [expired.apiKey.id]);
    await expectError(identity.auth.confirmApiKey({ apiKeyId: expired.apiKey.id }), 'unauthorized');

    const admin = await identity.register();
    await identity.members.addMember({ email: admin.email, role: 'admin' }, { principal: owner.principal });
    const { apiKey } = await identity.apiKeys.createApiKey({ name: 'k', scopes: ['*'] }, { principal: userPrincipal(admin.id, owner.tenantId, 'admin') });
    await identity.members.removeMember({ userId: admin.id }, { principal: owner.principal });
    await expectError(identity.auth.confirmApiKey({ apiKeyId: apiKey!.id }), 'unauthorized');
  });
});

describe('AuthenticateApiKey', () => {
  test('resolves a key to its tenant, creator, the creator\u2019s current role, scopes and plan', async ({ identity }) => {
    const owner = await identity.register();
    const admin = await identity.register();
    await identity.members.addMember({ email: admin.email, role: 'admin' }, { principal: owner.principal });
    const adminInTeam = userPrincipal(admin.id, owner.tenantId, 'admin');
    const expiresAt = IN_A_DAY();
    const { apiKey, secret } = await identity.apiKeys.createApiKey({ name: 'k', scopes: ['memory:read'], expiresAt }, { principal: adminInTeam });

    expect(await identity.auth.authenticateApiKey({ secret })).toEqual({
      apiKeyId: apiKey!.id,
      tenantId: owner.tenantId,
      userId: admin.id,
      role: 'admin',
      scopes: ['memory:read'],
      expiresAt,
      plan: 'free',
    });
    await identity.members.updateMember({ userId: admin.id, role: 'viewer' }, { principal: owner.principal });
    expect((await identity.auth.authenticateApiKey({ secret })).role).toBe('viewer');
  });

  test('is unauthorized for unknown, malformed, revoked and expired keys', async ({ identity }) => {
    const owner = await identity.register();
    await expectError(identity.auth.authenticateApiKey({ secret: `ap_live_${'A'.repeat(32)}` }), 'unauthorized');
    await expectError(identity.auth.authenticateApiKey({ secret: 'Bearer nonsense' }), 'unauthorized');

    const revoked = await createKey(identity, owner);
    await identity.apiKeys.revokeApiKey({ apiKeyId: revoked.apiKey.id }, { principal: owner.principal });
    await expectError(identity.auth.authenticateApiKey({ secret: revoked.secret }), 'unauthorized');

    const expired = await createKey(identity, owner);
    await identity.database.query("update api_keys set expires_at = now() - interval '1 second' where id = $1", [expired.apiKey.id]);
    await expectError(identity.auth.authenticateApiKey({ secret: expired.secret }), 'unauthorized');
  });

  test('is unauthorized once the creator has left the tenant', async ({ identity }) => {
    const owner = await identity.register();
    const admin = await identity.register();
    await identity.members.addMember({ email: admin.email, role: 'admin' }, { principal: owner.principal });
    const { secret } = await identity.apiKeys.createApiKey({ name: 'k', scopes: ['*'] }, { principal: userPrincipal(admin.id, owner.tenantId, 'admin') });
    await identity.auth.authenticateApiKey({ secret });
    await identity.members.removeMember({ userId: admin.id }, { principal: owner.principal });
    await expectError(identity.auth.authenticateApiKey({ secret }), 'unauthorized');
  });

  test('stamps last_used_at at most once a minute', async ({ identity }) => {
    const owner = await identity.register();
    const { apiKey, secret } = await createKey(identity, owner);
    const lastUsed = async () =>
      (await identity.database.query<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [apiKey.id]))[0]!.last_used_at;

    await identity.auth.authenticateApiKey({ secret });
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);

    await Promise.all(Array.from({ length: 5 }, () => identity.auth.authenticateApiKey({ secret })));
    expect(await lastUsed()).toEqual(first);

    // A minute later (simulated by ageing the stamp) the next use moves it again.
    await identity.database.query("update api_keys set last_used_at = last_used_at - interval '61 seconds' where id = $1", [apiKey.id]);
    const aged = await lastUsed();
    await identity.auth.authenticateApiKey({ secret });
    const moved = await lastUsed();
    expect(moved!.getTime()).toBeGreaterThan(aged!.getTime());

    const { items } = await identity.apiKeys.listApiKeys({ page: undefined }, { principal: owner.principal });
    expect(items[0]!.lastUsedAt).toEqual(moved);
  });

  test('writes last_used_at once for a burst of concurrent uses, and not per call', async ({ identity }) => {
    // Count the row updates that touch last_used_at, whatever their origin.
    await identity.database.query('create table if not exists api_key_touches (api_key_id text not null)');
    await identity.database.query(`create or replace function record_api_key_touch() returns trigger language plpgsql as $$
      begin insert into api_key_touches values (new.id); return new; end $$`);
    await identity.database.query(`create or replace trigger record_api_key_touch after update of last_used_at on api_keys
      for each row execute function record_api_key_touch()`);

    const owner = await identity.register();
    const { apiKey, secret } = await createKey(identity, owner);
    const touches = async () =>
      (await identity.database.query('select 1 from api_key_touches where api_key_id = $1', [apiKey.id])).length;

    await Promise.all(Array.from({ length: 20 }, () => identity.auth.authenticateApiKey({ secret })));
    expect(await touches()).toBe(1);
    for (let i = 0; i < 5; i++) await identity.auth.authenticateApiKey({ secret });
    expect(await touches()).toBe(1);
  });
});
