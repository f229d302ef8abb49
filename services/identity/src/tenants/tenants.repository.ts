import type { EntityManager } from '@agent-platform/kit/db';
import { Membership, Tenant, type Role } from './tenants.entity.js';
import type { Plan } from './plans.js';

/** The primary key that makes adding an existing member a conflict. */
export const MEMBERSHIPS_PKEY = 'memberships_pkey';

export class TenantsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  findTenant(id: string): Promise<Tenant | null> {
    return this.em.findOne(Tenant, { id });
  }

  async insertTenant(tenant: { id: string; name: string; plan: Plan; balance: number; createdAt: Date }): Promise<Tenant> {
    const entity = this.em.create(Tenant, tenant);
    await this.em.flush();
    return entity;
  }

  findMembership(tenantId: string, userId: string): Promise<Membership | null> {
    return this.em.findOne(Membership, { tenantId, userId });
  }

  firstMembershipOfUser(userId: string): Promise<Membership | null> {
    return this.em.findOne(Membership, { userId }, { orderBy: [{ createdAt: 'asc' }, { tenantId: 'asc' }] });
  }

  /** Newest first, as every list (decisions §5). */
  membersOfTenant(tenantId: string): Promise<Membership[]> {
    return this.em.find(Membership, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { userId: 'desc' }] });
  }

  /** Inserts now; an existing membership fails on MEMBERSHIPS_PKEY. */
  async insertMembership(membership: { tenantId: string; userId: string; role: Role; createdAt: Date }): Promise<Membership> {
    const entity = this.em.create(Membership, membership);
    await this.em.flush();
    return entity;
  }

  /** Writes pending changes of loaded entities (a changed role). */
  async save(): Promise<void> {
    await this.em.flush();
  }

  async deleteMembership(membership: Membership): Promise<void> {
    this.em.remove(membership);
    await this.em.flush();
  }
}
