import type { Harness } from './harness.js';

// What no API of identity does, done where identity keeps it (as identity's own tests do): a user
// deactivated or gone, a tenant moved to another plan. Each change must match exactly one row.

export function deactivateUser(h: Harness, userId: string): Promise<void> {
  return changeOne(h, 'update users set is_active = false where id = $1 returning id', [userId]);
}

/** Memberships, API keys and refresh tokens go with the user (on delete cascade). */
export function deleteUser(h: Harness, userId: string): Promise<void> {
  return changeOne(h, 'delete from users where id = $1 returning id', [userId]);
}

export function setPlan(h: Harness, tenantId: string, plan: 'free' | 'pro' | 'enterprise'): Promise<void> {
  return changeOne(h, 'update tenants set plan = $2 where id = $1 returning id', [tenantId, plan]);
}

async function changeOne(h: Harness, sql: string, params: unknown[]): Promise<void> {
  const rows = await h.platform.sql.identity.query(sql, params);
  if (rows.length !== 1) throw new Error(`expected one row changed by «${sql}», got ${rows.length}`);
}
