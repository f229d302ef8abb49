import { DomainError, GRANTABLE_ROLES, isGrantableRole, requireUser, type Actor, type GrantableRole } from '@agent-platform/kit';
import { isUniqueViolation } from '@agent-platform/kit/db';
import { isValidEmail, normalizeEmail } from '../shared/validation.js';
import type { User } from '../users/users.entity.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { Plan } from './plans.js';
import type { Membership, Role } from './tenants.entity.js';
import { MEMBERSHIPS_PKEY, type TenantsRepository } from './tenants.repository.js';

export interface TenantsServiceOptions {
  tenants: TenantsRepository;
  users: UsersRepository;
}

export interface ResolvedMembership {
  tenantId: string;
  role: Role;
  plan: Plan;
}

export interface Member {
  userId: string;
  email: string;
  fullName: string;
  role: Role;
  /** When the user joined the tenant. */
  createdAt: Date;
}

/** Memberships: who may act in a tenant, and how admins and owners manage that. */
export class TenantsService {
  private readonly options: TenantsServiceOptions;

  constructor(options: TenantsServiceOptions) {
    this.options = options;
  }

  /**
   * What a user (from a verified access token) may do in a tenant: the one asked for, or the first
   * membership (the tenant made at registration). Access tokens carry no roles; this is the source.
   */
  async resolveMembership(userId: string, tenantId: string | undefined): Promise<ResolvedMembership> {
    const user = userId === '' ? null : await this.options.users.findById(userId);
    if (!user?.isActive) throw new DomainError('unauthorized', 'The user of this token no longer exists or is deactivated.');
    const membership =
      tenantId === undefined
        ? await this.options.tenants.firstMembershipOfUser(userId)
        : await this.options.tenants.findMembership(tenantId, userId);
    if (!membership) {
      throw new DomainError('forbidden', tenantId === undefined ? 'You are not a member of any tenant.' : 'You are not a member of this tenant.');
    }
    const tenant = await this.options.tenants.findTenant(membership.tenantId);
    if (!tenant) throw new DomainError('forbidden', 'You are not a member of this tenant.');
    return { tenantId: tenant.id, role: membership.role, plan: tenant.plan };
  }

  /** A tenant's plan (rate limits of inbound webhooks addressed to it). */
  async planOf(tenantId: string): Promise<Plan> {
    const tenant = tenantId === '' ? null : await this.options.tenants.findTenant(tenantId);
    if (!tenant) throw DomainError.notFound('Tenant');
    return tenant.plan;
  }

  async listMembers(actor: Actor): Promise<Member[]> {
    requireUser(actor, 'admin');
    const memberships = await this.options.tenants.membersOfTenant(actor.tenantId);
    const users = new Map((await this.options.users.findByIds(memberships.map((m) => m.userId))).map((u) => [u.id, u]));
    return memberships.flatMap((membership) => {
      const user = users.get(membership.userId);
      return user ? [toMember(membership, user)] : [];
    });
  }

  /** Adds an already registered user by e-mail; ownership cannot be granted here. */
  async addMember(actor: Actor, email: string, role: string): Promise<Member> {
    requireUser(actor, 'admin');
    const normalized = normalizeEmail(email);
    const details = [];
    if (!isValidEmail(normalized)) details.push({ field: 'email', message: 'must be a valid e-mail address' });
    const roleProblem = grantableRoleProblem(role);
    if (roleProblem) details.push({ field: 'role', message: roleProblem });
    if (details.length > 0) throw DomainError.validation(details);

    const user = await this.options.users.findByEmail(normalized);
    if (!user?.isActive) throw DomainError.notFound('User');
    try {
      const membership = await this.options.tenants.insertMembership({
        tenantId: actor.tenantId,
        userId: user.id,
        role: role as GrantableRole,
        createdAt: new Date(),
      });
      return toMember(membership, user);
    } catch (error) {
      if (isUniqueViolation(error, MEMBERSHIPS_PKEY)) {
        throw new DomainError('conflict', 'This user is already a member of the tenant.', { cause: error });
      }
      throw error;
    }
  }

  async updateMember(actor: Actor, userId: string, role: string): Promise<Member> {
    requireUser(actor, 'admin');
    const roleProblem = grantableRoleProblem(role);
    if (roleProblem) throw DomainError.validation([{ field: 'role', message: roleProblem }]);
    const { membership, user } = await this.findMember(actor.tenantId, userId);
    if (membership.role === 'owner') throw new DomainError('forbidden', "An owner's role cannot be changed.");
    membership.role = role as GrantableRole;
    await this.options.tenants.save();
    return toMember(membership, user);
  }

  async removeMember(actor: Actor, userId: string): Promise<void> {
    requireUser(actor, 'admin');
    const { membership } = await this.findMember(actor.tenantId, userId);
    if (membership.role === 'owner') throw new DomainError('forbidden', 'An owner cannot be removed from the tenant.');
    await this.options.tenants.deleteMembership(membership);
  }

  private async findMember(tenantId: string, userId: string): Promise<{ membership: Membership; user: User }> {
    const membership = userId === '' ? null : await this.options.tenants.findMembership(tenantId, userId);
    const user = membership ? await this.options.users.findById(userId) : null;
    if (!membership || !user) throw DomainError.notFound('Member');
    return { membership, user };
  }
}

function grantableRoleProblem(role: string): string | undefined {
  if (isGrantableRole(role)) return undefined;
  if (role === 'owner') return 'owner cannot be granted; a tenant has the owner who created it';
  return `must be one of ${GRANTABLE_ROLES.join(', ')}`;
}

function toMember(membership: Membership, user: User): Member {
  return { userId: user.id, email: user.email, fullName: user.fullName, role: membership.role, createdAt: membership.createdAt };
}
