import { DomainError, createLogger } from '@agent-platform/kit';
import { GrpcServer, requirePrincipal, type CallContext, type Principal } from '@agent-platform/kit/grpc';
import { ApiKeyServiceService, type ApiKey } from '@agent-platform/proto/identity/v1/api-keys';
import { AuthServiceService, type TokenPair } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { MemberServiceService, UserServiceService, type Member } from '@agent-platform/proto/identity/v1/users';
import { trace } from '@opentelemetry/api';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { IdentityModel, apiKeySecret, type ApiKeyRow, type MembershipRow } from './identity-model.js';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface RecordedCall {
  method: string;
  principal: Principal | undefined;
  requestId: string | undefined;
  traceId: string | undefined;
}

export interface TokenClaims {
  sub: string;
  iss?: string;
  aud?: string;
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
  key?: SigningKey;
}

export async function newSigningKey(kid = `sgk_${Math.random().toString(36).slice(2, 10)}`): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return { kid, privateKey, publicJwk: await exportJWK(publicKey) };
}

/**
 * A real gRPC server implementing identity's generated services over an in-memory model, with a
 * test Ed25519 key: the gateway talks to it exactly as to identity, and tests can mint any token.
 */
export class IdentityDouble {
  readonly model = new IdentityModel();
  readonly calls: RecordedCall[] = [];
  /** Keys served by GetJwks; the first signs new tokens. */
  keys: SigningKey[] = [];
  /** One-shot failures: the next call of the method throws this. */
  readonly faults = new Map<string, Error>();
  private readonly server = new GrpcServer({ logger: createLogger({ service: 'identity-double', level: 'silent' }) });

  async start(): Promise<string> {
    this.keys = [await newSigningKey()];
    this.addServices();
    const port = await this.server.listen('127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return this.server.stop(1_000);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  async mintToken(claims: TokenClaims): Promise<string> {
    const key = claims.key ?? this.keys[0];
    if (!key) throw new Error('no signing key');
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(claims.iss ?? 'agent-platform')
      .setAudience(claims.aud ?? 'agent-platform-api')
      .setIssuedAt(now)
      .setExpirationTime(now + (claims.expiresIn ?? 3600))
      .setJti(Math.random().toString(36).slice(2))
      .sign(key.privateKey);
  }

  private async tokens(userId: string): Promise<TokenPair> {
    return { accessToken: await this.mintToken({ sub: userId }), expiresIn: 3600, refreshToken: this.model.issueRefreshToken(userId), refreshExpiresIn: 2_592_000 };
  }

  private record(method: string, ctx: CallContext): void {
    this.calls.push({ method, principal: ctx.principal, requestId: ctx.requestId, traceId: trace.getActiveSpan()?.spanContext().traceId });
    const fault = this.faults.get(method);
    if (fault) {
      this.faults.delete(method);
      throw fault;
    }
  }

  private member(row: MembershipRow): Member {
    const user = this.model.users.get(row.userId);
    return { userId: row.userId, email: user?.email ?? '', fullName: user?.fullName ?? '', role: row.role, createdAt: row.createdAt };
  }

  private apiKey(row: ApiKeyRow): ApiKey {
    return {
      id: row.id,
      name: row.name,
      keyPrefix: row.secret.slice(0, 12),
      scopes: row.scopes,
      expiresAt: row.expiresAt,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
    };
  }

  private addServices(): void {
    const { model } = this;
    const tenantMember = (principal: Principal, userId: string): MembershipRow => {
      const row = model.membership(userId, principal.tenantId);
      if (!row) throw DomainError.notFound('Member');
      return row;
    };
    this.server
      .add('agentplatform.identity.v1.AuthService', AuthServiceService, {
        register: async (request, ctx) => {
          this.record('register', ctx);
          const { user, tenant } = model.register(request.email, request.password, request.fullName, request.company);
          return Promise.resolve({ id: user.id, email: user.email, fullName: user.fullName, tenantId: tenant.id, credits: model.balance(tenant.id), createdAt: user.createdAt });
        },
        login: async (request, ctx) => {
          this.record('login', ctx);
          const user = model.userByEmail(request.email);
          if (!user || user.password !== request.password) throw new DomainError('unauthorized', 'Invalid e-mail or password.');
          return { tokens: await this.tokens(user.id) };
        },
        refresh: async (request, ctx) => {
          this.record('refresh', ctx);
          const entry = model.refreshTokens.get(request.refreshToken);
          if (!entry || entry.spent) throw new DomainError('unauthorized', 'The refresh token is invalid.');
          entry.spent = true;
          return { tokens: await this.tokens(entry.userId) };
        },
        getJwks: async (_request, ctx) => {
          this.record('getJwks', ctx);
          return Promise.resolve({
            keys: this.keys.map((key) => ({ kid: key.kid, kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x ?? '', alg: 'EdDSA', use: 'sig' })),
          });
        },
        authenticateApiKey: async (request, ctx) => {
          this.record('authenticateApiKey', ctx);
          const row = [...model.apiKeys.values()].find((key) => key.secret === request.secret);
          const creator = row ? model.membership(row.userId, row.tenantId) : undefined;
          if (!row || row.revoked || (row.expiresAt && row.expiresAt <= new Date()) || !creator) {
            throw new DomainError('unauthorized', 'The API key is invalid, revoked or expired.');
          }
          row.lastUsedAt = new Date();
          const plan = model.tenant(row.tenantId).plan;
          return Promise.resolve({ apiKeyId: row.id, tenantId: row.tenantId, userId: row.userId, role: creator.role, scopes: row.scopes, expiresAt: row.expiresAt, plan });
        },
        resolveMembership: async (request, ctx) => {
          this.record('resolveMembership', ctx);
          const user = model.users.get(request.userId);
          if (!user?.isActive) throw new DomainError('unauthorized', 'The user is unknown or inactive.');
          const row = request.tenantId === undefined ? model.membershipsOf(user.id)[0] : model.membership(user.id, request.tenantId);
          if (!row) throw new DomainError('forbidden', 'You are not a member of this tenant.');
          return Promise.resolve({ tenantId: row.tenantId, role: row.role, plan: model.tenant(row.tenantId).plan });
        },
        getTenantPlan: async (request, ctx) => {
          this.record('getTenantPlan', ctx);
          const tenant = model.tenants.get(request.tenantId);
          if (!tenant) throw DomainError.notFound('Tenant');
          return Promise.resolve({ plan: tenant.plan });
        },
      })
      .add('agentplatform.identity.v1.UserService', UserServiceService, {
        getCurrentUser: async (_request, ctx) => {
          this.record('getCurrentUser', ctx);
          const user = model.users.get(requirePrincipal(ctx).userId);
          if (!user) throw new DomainError('unauthorized', 'The user is gone.');
          const tenants = model.membershipsOf(user.id).map((row) => ({ id: row.tenantId, name: model.tenant(row.tenantId).name, role: row.role }));
          return Promise.resolve({ id: user.id, email: user.email, fullName: user.fullName, isActive: user.isActive, createdAt: user.createdAt, tenants });
        },
      })
      .add('agentplatform.identity.v1.MemberService', MemberServiceService, {
        listMembers: async (_request, ctx) => {
          this.record('listMembers', ctx);
          const tenantId = requirePrincipal(ctx).tenantId;
          return Promise.resolve({ items: model.memberships.filter((row) => row.tenantId === tenantId).map((row) => this.member(row)) });
        },
        addMember: async (request, ctx) => {
          this.record('addMember', ctx);
          const principal = requirePrincipal(ctx);
          const user = model.userByEmail(request.email);
          if (!user) throw DomainError.notFound('User');
          if (model.membership(user.id, principal.tenantId)) throw new DomainError('conflict', 'Already a member.');
          const row = { userId: user.id, tenantId: principal.tenantId, role: request.role, createdAt: new Date() };
          model.memberships.push(row);
          return Promise.resolve({ member: this.member(row) });
        },
        updateMember: async (request, ctx) => {
          this.record('updateMember', ctx);
          const row = tenantMember(requirePrincipal(ctx), request.userId);
          if (row.role === 'owner') throw new DomainError('forbidden', "An owner's role cannot be changed.");
          row.role = request.role;
          return Promise.resolve({ member: this.member(row) });
        },
        removeMember: async (request, ctx) => {
          this.record('removeMember', ctx);
          const row = tenantMember(requirePrincipal(ctx), request.userId);
          if (row.role === 'owner') throw new DomainError('forbidden', 'An owner cannot be removed.');
          model.memberships.splice(model.memberships.indexOf(row), 1);
          return Promise.resolve({});
        },
      })
      .add('agentplatform.identity.v1.ApiKeyService', ApiKeyServiceService, {
        createApiKey: async (request, ctx) => {
          this.record('createApiKey', ctx);
          const principal = requirePrincipal(ctx);
          const row: ApiKeyRow = {
            id: `key_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`,
            name: request.name,
            secret: apiKeySecret(),
            scopes: request.scopes,
            tenantId: principal.tenantId,
            userId: principal.userId,
            expiresAt: request.expiresAt,
            createdAt: new Date(),
            lastUsedAt: undefined,
            revoked: false,
          };
          model.apiKeys.set(row.id, row);
          return Promise.resolve({ apiKey: this.apiKey(row), secret: row.secret });
        },
        listApiKeys: async (request, ctx) => {
          this.record('listApiKeys', ctx);
          const tenantId = requirePrincipal(ctx).tenantId;
          const rows = [...model.apiKeys.values()].filter((row) => row.tenantId === tenantId && !row.revoked);
          const page = IdentityModel.page(rows, request.page?.page ?? 1, request.page?.perPage ?? 20);
          return Promise.resolve({ items: page.map((row) => this.apiKey(row)), total: rows.length });
        },
        revokeApiKey: async (request, ctx) => {
          this.record('revokeApiKey', ctx);
          const row = model.apiKeys.get(request.apiKeyId);
          if (!row || row.revoked || row.tenantId !== requirePrincipal(ctx).tenantId) throw DomainError.notFound('API key');
          row.revoked = true;
          return Promise.resolve({});
        },
      })
      .add('agentplatform.identity.v1.BillingService', BillingServiceService, {
        getCredits: async (_request, ctx) => {
          this.record('getCredits', ctx);
          const tenantId = requirePrincipal(ctx).tenantId;
          return Promise.resolve({ balance: model.balance(tenantId), threshold: 100, plan: model.tenant(tenantId).plan });
        },
        listTransactions: async (request, ctx) => {
          this.record('listTransactions', ctx);
          const tenantId = requirePrincipal(ctx).tenantId;
          const rows = model.ledger.filter((row) => row.tenantId === tenantId);
          const page = IdentityModel.page(rows, request.page?.page ?? 1, request.page?.perPage ?? 20);
          return Promise.resolve({ items: page, total: rows.length });
        },
        createPurchase: async (request, ctx) => {
          this.record('createPurchase', ctx);
          const row = model.credit(requirePrincipal(ctx).tenantId, request.credits, 'purchase', 'Credit purchase');
          return Promise.resolve({ purchaseId: `pur_${row.id.slice(4)}`, credits: request.credits, status: 'completed', balance: row.balanceAfter, createdAt: row.createdAt });
        },
        debitCredits: async (_request, ctx) => {
          this.record('debitCredits', ctx);
          return Promise.reject(new Error('not used by the gateway'));
        },
      });
  }
}
