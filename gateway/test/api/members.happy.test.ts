import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCall, principalOf } from '../support/calls.js';
import { addMember, as, ISO_MS, newAccount, startHarness, type Harness, matching } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

interface MemberPage {
  items: { user_id: string }[];
  total: number;
  page: number;
  per_page: number;
}


describe('members of a tenant', () => {
  it('adds, lists, changes and removes a member, field by field', async () => {
    const owner = await newAccount(h.app, { company: 'Acme' });
    const colleague = await newAccount(h.app, { full_name: 'Col League' });
    const base = `/api/v1/tenants/${owner.tenantId}/members`;

    const added = await as(h.app, owner.token, { method: 'POST', url: base, payload: { email: colleague.email.toUpperCase(), role: 'member' } });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toEqual({ user_id: colleague.userId, email: colleague.email, full_name: 'Col League', role: 'member', created_at: matching(ISO_MS) });

    const listed = await as(h.app, owner.token, { method: 'GET', url: base });
    expect(listed.statusCode).toBe(200);
    // Newest first, as every list (decisions §5): the colleague joined after the owner.
    expect(listed.json<MemberPage>()).toEqual({
      items: [
        { user_id: colleague.userId, email: colleague.email, full_name: 'Col League', role: 'member', created_at: matching(ISO_MS) },
        { user_id: owner.userId, email: owner.email, full_name: '', role: 'owner', created_at: matching(ISO_MS) },
      ],
      total: 2,
      page: 1,
      per_page: 20,
    });
    const pages = await Promise.all(['1', '2'].map(async (page) => (await as(h.app, owner.token, { method: 'GET', url: base, query: { page, per_page: '1' } })).json<MemberPage>()));
    expect(pages.map(({ items, ...paging }) => ({ ...paging, count: items.length }))).toEqual([
      { total: 2, page: 1, per_page: 1, count: 1 },
      { total: 2, page: 2, per_page: 1, count: 1 },
    ]);
    expect(pages.flatMap((page) => page.items.map((item) => item.user_id))).toEqual([colleague.userId, owner.userId]);

    const changed = await as(h.app, owner.token, { method: 'PATCH', url: `${base}/${colleague.userId}`, payload: { role: 'admin' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ user_id: colleague.userId, role: 'admin' });

    const removed = await as(h.app, owner.token, { method: 'DELETE', url: `${base}/${colleague.userId}` });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({ success: true, message: 'Member removed.' });
    expect((await as(h.app, owner.token, { method: 'GET', url: base })).json()).toMatchObject({ total: 1 });
  });

  it('acts in the tenant named by the path', async () => {
    const owner = await newAccount(h.app);
    const admin = await newAccount(h.app);
    await addMember(h.app, owner, admin, 'admin');
    const listed = await as(h.app, admin.token, { method: 'GET', url: `/api/v1/tenants/${owner.tenantId}/members` });
    expect(listed.statusCode).toBe(200);
    expect(principalOf(lastCall(h.identity, 'ListMembers'))).toMatchObject({ userId: admin.userId, tenantId: owner.tenantId, role: 'admin' });
  });

  it('a role change and a removal take effect at once for tokens already issued, on every later request', async () => {
    const owner = await newAccount(h.app);
    const member = await newAccount(h.app);
    await addMember(h.app, owner, member, 'viewer');
    const inOwners = { method: 'GET' as const, url: '/api/v1/billing/credits', query: { tenant_id: owner.tenantId } };
    expect((await as(h.app, member.token, inOwners)).statusCode).toBe(200);
    expect((await as(h.app, member.token, { method: 'GET', url: `/api/v1/tenants/${owner.tenantId}/members` })).statusCode).toBe(403);

    await as(h.app, owner.token, { method: 'PATCH', url: `/api/v1/tenants/${owner.tenantId}/members/${member.userId}`, payload: { role: 'admin' } });
    // The first asks identity and caches the new role; the second reads it back from the cache.
    for (let request = 0; request < 2; request += 1) {
      expect((await as(h.app, member.token, { method: 'GET', url: `/api/v1/tenants/${owner.tenantId}/members` })).statusCode).toBe(200);
    }

    await as(h.app, owner.token, { method: 'DELETE', url: `/api/v1/tenants/${owner.tenantId}/members/${member.userId}` });
    expect((await as(h.app, member.token, inOwners)).statusCode).toBe(403);
  });
});
