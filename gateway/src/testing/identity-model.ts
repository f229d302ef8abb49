import { randomBytes } from 'node:crypto';
import { API_KEY_SECRET_PREFIX, DomainError, newId } from '@agent-platform/kit';

/** The in-memory state behind the identity double: just enough of identity to drive the gateway. */
export interface UserRow {
  id: string;
  email: string;
  password: string;
  fullName: string;
  isActive: boolean;
  createdAt: Date;
}

export interface TenantRow {
  id: string;
  name: string;
  plan: string;
}

export interface MembershipRow {
  userId: string;
  tenantId: string;
  role: string;
  createdAt: Date;
}

export interface ApiKeyRow {
  id: string;
  name: string;
  secret: string;
  scopes: string[];
  tenantId: string;
  userId: string;
  expiresAt: Date | undefined;
  createdAt: Date;
  lastUsedAt: Date | undefined;
  revoked: boolean;
}

export interface LedgerRow {
  id: string;
  tenantId: string;
  amount: number;
  balanceAfter: number;
  kind: string;
  description: string;
  createdAt: Date;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function apiKeySecret(): string {
  return `${API_KEY_SECRET_PREFIX}${Array.from(randomBytes(32), (byte) => BASE62[byte % 62]).join('')}`;
}

export class IdentityModel {
  readonly users = new Map<string, UserRow>();
  readonly tenants = new Map<string, TenantRow>();
  readonly memberships: MembershipRow[] = [];
  readonly apiKeys = new Map<string, ApiKeyRow>();
  readonly ledger: LedgerRow[] = [];
  readonly refreshTokens = new Map<string, { userId: string; spent: boolean }>();
  defaultPlan = 'free';

  register(email: string, password: string, fullName: string | undefined, company: string | undefined): { user: UserRow; tenant: TenantRow } {
    const normalised = email.toLowerCase();
    if ([...this.users.values()].some((user) => user.email === normalised)) {
      throw new DomainError('conflict', 'This e-mail is already registered.');
    }
    const user: UserRow = { id: newId('user'), email: normalised, password, fullName: fullName ?? '', isActive: true, createdAt: new Date() };
    const tenant: TenantRow = { id: newId('tenant'), name: company ?? `${fullName ?? normalised}'s workspace`, plan: this.defaultPlan };
    this.users.set(user.id, user);
    this.tenants.set(tenant.id, tenant);
    this.memberships.push({ userId: user.id, tenantId: tenant.id, role: 'owner', createdAt: user.createdAt });
    this.credit(tenant.id, 1000, 'welcome_grant', 'Welcome credits');
    return { user, tenant };
  }

  userByEmail(email: string): UserRow | undefined {
    return [...this.users.values()].find((user) => user.email === email.toLowerCase());
  }

  membership(userId: string, tenantId: string): MembershipRow | undefined {
    return this.memberships.find((row) => row.userId === userId && row.tenantId === tenantId);
  }

  membershipsOf(userId: string): MembershipRow[] {
    return this.memberships.filter((row) => row.userId === userId);
  }

  tenant(tenantId: string): TenantRow {
    const tenant = this.tenants.get(tenantId);
    if (!tenant) throw DomainError.notFound('Tenant');
    return tenant;
  }

  balance(tenantId: string): number {
    return this.ledger.filter((row) => row.tenantId === tenantId).reduce((sum, row) => sum + row.amount, 0);
  }

  credit(tenantId: string, amount: number, kind: string, description: string): LedgerRow {
    const row: LedgerRow = {
      id: newId('transaction'),
      tenantId,
      amount,
      balanceAfter: this.balance(tenantId) + amount,
      kind,
      description,
      createdAt: new Date(),
    };
    this.ledger.push(row);
    return row;
  }

  issueRefreshToken(userId: string): string {
    const token = `${newId('refreshToken')}.${randomBytes(16).toString('hex')}`;
    this.refreshTokens.set(token, { userId, spent: false });
    return token;
  }

  /** Newest first, one page. */
  static page<T>(rows: T[], page: number, perPage: number): T[] {
    const newestFirst = [...rows].reverse();
    const start = (Math.max(page, 1) - 1) * perPage;
    return newestFirst.slice(start, start + perPage);
  }
}
