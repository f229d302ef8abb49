import { isId } from '@agent-platform/kit';
import { describe, expect } from 'vitest';
import { expectError, test, uniqueEmail, userPrincipal } from './harness.js';

describe('Register', () => {
  test('creates the user, an owned tenant and the welcome credits', async ({ identity }) => {
    const email = uniqueEmail('ada');
    const before = Date.now();
    const registered = await identity.auth.register({ email, password: 'correct horse battery', fullName: 'Ada Lovelace' });

    expect(isId('user', registered.id)).toBe(true);
    expect(isId('tenant', registered.tenantId)).toBe(true);
    expect(registered).toMatchObject({ email, fullName: 'Ada Lovelace', credits: 1000 });
    expect(registered.createdAt!.getTime()).toBeGreaterThanOrEqual(before - 1_000);

    const [tenant] = await identity.database.query<{ name: string; plan: string; balance: string }>(
      'select name, plan, balance from tenants where id = $1',
      [registered.tenantId],
    );
    expect(tenant).toEqual({ name: "Ada Lovelace's workspace", plan: 'free', balance: '1000' });

    const ledger = await identity.database.query<{ amount: string; balance_after: string; kind: string }>(
      'select amount, balance_after, kind from credit_transactions where tenant_id = $1',
      [registered.tenantId],
    );
    expect(ledger).toEqual([{ amount: '1000', balance_after: '1000', kind: 'welcome_grant' }]);

    const memberships = await identity.database.query('select user_id, role from memberships where tenant_id = $1', [registered.tenantId]);
    expect(memberships).toEqual([{ user_id: registered.id, role: 'owner' }]);
  });

  test('lower-cases the e-mail and never stores the password', async ({ identity }) => {
    const email = uniqueEmail('Mixed.Case').replace('example.com', 'EXAMPLE.com');
    const registered = await identity.auth.register({ email: `  ${email} `, password: 'Secret-Passw0rd' });
    expect(registered.email).toBe(email.toLowerCase());

    const [row] = await identity.database.query<{ password_hash: string }>('select password_hash from users where id = $1', [registered.id]);
    expect(row!.password_hash).toMatch(/^\$scrypt\$ln=\d+,r=\d+,p=\d+\$/);
    expect(row!.password_hash).not.toContain('Secret-Passw0rd');
  });

  test('names the tenant after the company, else the full name, else the e-mail', async ({ identity }) => {
    const withCompany = await identity.register({ company: 'Analytical Engines Ltd', fullName: 'Ada' });
    const withEmailOnly = await identity.register();
    const names = await identity.database.query<{ id: string; name: string }>('select id, name from tenants where id = any($1)', [
      [withCompany.tenantId, withEmailOnly.tenantId],
    ]);
    expect(new Map(names.map((row) => [row.id, row.name]))).toEqual(
      new Map([
        [withCompany.tenantId, 'Analytical Engines Ltd'],
        [withEmailOnly.tenantId, `${withEmailOnly.email}'s workspace`],
      ]),
    );
  });

  test('rejects a second registration of an e-mail, whatever its case', async ({ identity }) => {
    const user = await identity.register();
    const error = await expectError(identity.auth.register({ email: user.email.toUpperCase(), password: 'another password' }), 'conflict');
    expect(error.details).toEqual([{ field: 'email', message: 'is already registered' }]);
  });

  test('lets exactly one of several racing registrations of one e-mail win', async ({ identity }) => {
    const email = uniqueEmail('race');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => identity.auth.register({ email, password: 'racing password' })),
    );
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const losers = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as { code?: string }] : []));
    expect(winners).toHaveLength(1);
    expect(losers.map((error) => error.code)).toEqual(['conflict', 'conflict', 'conflict', 'conflict']);

    const users = await identity.database.query('select id from users where email = $1', [email]);
    expect(users).toHaveLength(1);
    // The losers' transactions rolled back entirely: no orphaned tenants or grants.
    const orphans = await identity.database.query(
      'select t.id from tenants t left join memberships m on m.tenant_id = t.id where m.tenant_id is null',
    );
    expect(orphans).toEqual([]);
  });

  test('names every invalid field', async ({ identity }) => {
    const error = await expectError(
      identity.auth.register({ email: 'not-an-email', password: 'short', fullName: 'x'.repeat(201), company: 'y'.repeat(201) }),
      'validation_error',
    );
    expect(error.details.map((d) => d.field)).toEqual(['email', 'password', 'full_name', 'company']);

    const missing = await expectError(identity.auth.register({ email: '', password: '' }), 'validation_error');
    expect(missing.details).toEqual([
      { field: 'email', message: 'is required' },
      { field: 'password', message: 'is required' },
    ]);
  });

  test('accepts passwords of 8 and 128 characters and refuses 7 and 129', async ({ identity }) => {
    await identity.auth.register({ email: uniqueEmail(), password: 'a'.repeat(8) });
    await identity.auth.register({ email: uniqueEmail(), password: 'a'.repeat(128) });
    for (const password of ['a'.repeat(7), 'a'.repeat(129)]) {
      const error = await expectError(identity.auth.register({ email: uniqueEmail(), password }), 'validation_error');
      expect(error.details.map((d) => d.field)).toEqual(['password']);
    }
  });
});

describe('GetCurrentUser', () => {
  test('returns the user with every membership', async ({ identity }) => {
    const owner = await identity.register({ company: 'Team Tenant' });
    const member = await identity.register({ fullName: 'Grace Hopper' });
    await identity.members.addMember({ email: member.email, role: 'viewer' }, { principal: owner.principal });

    const me = await identity.users.getCurrentUser({}, { principal: member.principal });
    expect(me).toMatchObject({ id: member.id, email: member.email, fullName: 'Grace Hopper', isActive: true });
    expect(me.tenants).toEqual([
      { id: member.tenantId, name: "Grace Hopper's workspace", role: 'owner' },
      { id: owner.tenantId, name: 'Team Tenant', role: 'viewer' },
    ]);
  });

  test('needs a principal, and a user that still exists', async ({ identity }) => {
    await expectError(identity.users.getCurrentUser({}), 'unauthorized');
    const ghost = userPrincipal('usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'tnt_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'owner');
    await expectError(identity.users.getCurrentUser({}, { principal: ghost }), 'unauthorized');
  });
});
