import { ROLES } from '@agent-platform/kit';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { PLANS } from './plans.js';

export type { Role } from '@agent-platform/kit';

export const TenantSchema = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    plan: p.enum(PLANS),
    /** Credits; equals the sum of the tenant's ledger (billing). Never negative (a CHECK). */
    balance: p.bigint('number'),
    createdAt: p.datetime(),
  },
});

export class Tenant extends TenantSchema.class {}
TenantSchema.setClass(Tenant);

/** A user's role in a tenant. The user's first membership is the tenant made at registration. */
export const MembershipSchema = defineEntity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    tenantId: p.string().primary(),
    userId: p.string().primary(),
    role: p.enum(ROLES),
    createdAt: p.datetime(),
  },
  primaryKeys: ['tenantId', 'userId'],
});

export class Membership extends MembershipSchema.class {}
MembershipSchema.setClass(Membership);
