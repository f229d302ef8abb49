import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect } from 'vitest';
import { expectError, test, userPrincipal, type IdentityHarness, type TestUser } from './harness.js';

/** An owner's tenant with one more member of `role`, and principals for both. */
async function teamWith(identity: IdentityHarness, role: 'admin' | 'member' | 'viewer') {
  const owner = await identity.register({ company: 'Team' });
  const other = await identity.register();
  await identity.members.addMember({ email: other.email, role }, { principal: owner.principal });
  return { owner, other, otherInTeam: userPrincipal(other.id, owner.tenantId, role) };
}

describe('ResolveMembership', () => {
  test('defaults to the tenant made at registration, with its role and plan', async ({ identity }) => {
    const { other } = await teamWith(identity, 'admin');
    // `other` joined the team after registering: the first membership is still their own tenant.
    expect(await identity.auth.resolveMembership({ userId: other.id })).toEqual({ tenantId: other.tenantId, role: 'owner', plan: 'free' });
  });

  test('resolves an explicitly asked tenant', async ({ identity }) => {
    const { owner, other } = await teamWith(identity, 'viewer');
    await identity.database.query("update tenants set plan = 'pro' where id = $1", [owner.tenantId]);
    expect(await identity.auth.resolveMembership({ userId: other.id, tenantId: owner.tenantId })).toEqual({
      tenantId: owner.tenantId,
      role: 'viewer',
      plan: 'pro',
    });
  });

  test('forbids a tenant the user is not a member of, existing or not', async ({ identity }) => {
    const alice = await identity.register();
    const bob = await identity.register();
    await expectError(identity.auth.resolveMembership({ userId: alice.id, tenantId: bob.tenantId }), 'forbidden');
    await expectError(identity.auth.resolveMembership({ userId: alice.id, tenantId: 'tnt_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 'forbidden');
  });

  test('is unauthorized for an unknown or deactivated user', async ({ identity }) => {
    await expectError(identity.auth.resolveMembership({ userId: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 'unauthorized');
    const user = await identity.register();
    await identity.database.query('update users set is_active = false where id = $1', [user.id]);
    await expectError(identity.auth.resolveMembership({ userId: user.id }), 'unauthorized');
  });

  test('reflects a role change at once (tokens carry no roles)', async ({ identity }) => {
    const { owner, other } = await teamWith(identity, 'member');
    await identity.members.updateMember({ userId: other.id, role: 'admin' }, { principal: owner.principal });
    expect((await identity.auth.resolveMembership({ userId: other.id, tenantId: owner.tenantId })).role).toBe('admin');
    await identity.members.removeMember({ userId: other.id }, { principal: owner.principal });
    await expectError(identity.auth.resolveMembership({ userId: other.id, tenantId: owner.tenantId }), 'forbidden');
  });
});

describe('MemberService', () => {
  test('lists the members of the principal tenant, newest first', async ({ identity }) => {
    const { owner, other } = await teamWith(identity, 'member');
    const { items } = await identity.members.listMembers({}, { principal: owner.principal });
    expect(items.map(({ userId, email, role }) => ({ userId, email, role }))).toEqual([
      { userId: other.id, email: other.email, role: 'member' },
      { userId: owner.id, email: owner.email, role: 'owner' },
    ]);
    expect(items.every((item) => item.createdAt instanceof Date)).toBe(true);
  });

  test('adds a registered user by e-mail, in any case', async ({ identity }) => {
    const owner = await identity.register();
    const invitee = await identity.register({ fullName: 'Invitee' });
    const { member } = await identity.members.addMember({ email: invitee.email.toUpperCase(), role: 'admin' }, { principal: owner.principal });
    expect(member).toMatchObject({ userId: invitee.id, email: invitee.email, fullName: 'Invitee', role: 'admin' });
  });

  test('refuses unknown users, existing members and bad roles', async ({ identity }) => {
    const { owner, other } = await teamWith(identity, 'viewer');
    await expectError(identity.members.addMember({ email: 'nobody-here@example.com', role: 'member' }, { principal: owner.principal }), 'not_found');
    await expectError(identity.members.addMember({ email: other.email, role: 'member' }, { principal: owner.principal }), 'conflict');
    const someone = await identity.register();
    for (const role of ['owner', 'superuser', '']) {
      const error = await expectError(identity.members.addMember({ email: someone.email, role }, { principal: owner.principal }), 'validation_error');
      expect(error.details.map((d) => d.field)).toEqual(['role']);
    }
  });

  test('changes roles, but never an owner\u2019s', async ({ identity }) => {
    const { owner, other, otherInTeam } = await teamWith(identity, 'admin');
    const { member } = await identity.members.updateMember({ userId: other.id, role: 'viewer' }, { principal: owner.principal });
    expect(member?.role).toBe('viewer');
    const [row] = await identity.database.query<{ role: string }>('select role from memberships where tenant_id = $1 and user_id = $2', [owner.tenantId, other.id]);
    expect(row?.role).toBe('viewer');

    await identity.members.updateMember({ userId: other.id, role: 'admin' }, { principal: owner.principal });
    const adminPrincipal = { ...otherInTeam, role: 'admin' };
    await expectError(identity.members.updateMember({ userId: owner.id, role: 'member' }, { principal: adminPrincipal }), 'forbidden');
    await expectError(identity.members.updateMember({ userId: other.id, role: 'owner' }, { principal: owner.principal }), 'validation_error');
    await expectError(identity.members.updateMember({ userId: 'usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', role: 'member' }, { principal: owner.principal }), 'not_found');
  });

  test('removes members, but never an owner', async ({ identity }) => {
    const { owner, other, otherInTeam } = await teamWith(identity, 'admin');
    await expectError(identity.members.removeMember({ userId: owner.id }, { principal: otherInTeam }), 'forbidden');
    await identity.members.removeMember({ userId: other.id }, { principal: owner.principal });
    await expectError(identity.members.removeMember({ userId: other.id }, { principal: owner.principal }), 'not_found');
    const { items } = await identity.members.listMembers({}, { principal: owner.principal });
    expect(items.map((item) => item.userId)).toEqual([owner.id]);
  });

  test('only lets admins and owners manage members, and only with a user token', async ({ identity }) => {
    const { owner, otherInTeam } = await teamWith(identity, 'member');
    const someone: TestUser = await identity.register();
    await expectError(identity.members.listMembers({}, { principal: otherInTeam }), 'forbidden');
    await expectError(identity.members.addMember({ email: someone.email, role: 'viewer' }, { principal: otherInTeam }), 'forbidden');
    await expectError(identity.members.removeMember({ userId: owner.id }, { principal: otherInTeam }), 'forbidden');
    const keyPrincipal = { ...owner.principal, kind: PrincipalKind.KIND_API_KEY, apiKeyId: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', scopes: ['*'] };
    await expectError(identity.members.listMembers({}, { principal: keyPrincipal }), 'forbidden');
    await expectError(identity.members.listMembers({}), 'unauthorized');
  });

  test('only ever touches the principal tenant', async ({ identity }) => {
    const { owner: ownerA, other: memberOfA } = await teamWith(identity, 'member');
    const ownerB = await identity.register();
    // Owner of B cannot see, change or remove A's member through B's principal.
    const { items } = await identity.members.listMembers({}, { principal: ownerB.principal });
    expect(items.map((item) => item.userId)).toEqual([ownerB.id]);
    await expectError(identity.members.updateMember({ userId: memberOfA.id, role: 'viewer' }, { principal: ownerB.principal }), 'not_found');
    await expectError(identity.members.removeMember({ userId: memberOfA.id }, { principal: ownerB.principal }), 'not_found');
    const [row] = await identity.database.query<{ role: string }>('select role from memberships where tenant_id = $1 and user_id = $2', [ownerA.tenantId, memberOfA.id]);
    expect(row?.role).toBe('member');
  });
});

describe('GetTenantPlan', () => {
  test("answers a tenant's plan, and not_found for a tenant that does not exist", async ({ identity }) => {
    const owner = await identity.register();
    expect(await identity.auth.getTenantPlan({ tenantId: owner.tenantId })).toEqual({ plan: 'free' });
    await identity.database.query(`update tenants set plan = 'pro' where id = $1`, [owner.tenantId]);
    expect(await identity.auth.getTenantPlan({ tenantId: owner.tenantId })).toEqual({ plan: 'pro' });
    await expectError(identity.auth.getTenantPlan({ tenantId: 'tnt_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 'not_found');
    await expectError(identity.auth.getTenantPlan({ tenantId: '' }), 'not_found');
  });
});
