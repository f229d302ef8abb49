import { createClient, type AgentPlatformClient, type Tokens, type User } from '@agent-platform/client';

/**
 * Who is signed in (decisions §15): the access token lives only in memory; the refresh token is
 * kept in localStorage so a reload stays signed in, and is spent (rotated) at every refresh.
 * Signing out forgets both. No API key is ever stored.
 */
export interface SessionState {
  status: 'signed-out' | 'restoring' | 'signed-in';
  user: User | undefined;
  /** The tenant every call is scoped to (`tenant_id`); one of `user.tenants`. */
  tenantId: string | undefined;
}

const REFRESH_TOKEN_KEY = 'agent-platform.console.refresh-token';
const TENANT_KEY = 'agent-platform.console.tenant';
/** Refresh this long before the access token expires, so a request never meets an expired one. */
const REFRESH_AHEAD_MS = 60_000;
/**
 * Calls that name no tenant: those outside any (register, login, refresh, a tenant's members by
 * path), and `/auth/me`, which lists every tenant of the user and would refuse one they just left.
 */
const UNSCOPED_PATHS = /^\/api\/v1\/(auth\/(register|login|refresh|me)$|tenants\/)/;

type Listener = () => void;

export class Session {
  readonly client: AgentPlatformClient;
  /** Calls that need no credential: register, login, refresh. */
  readonly publicClient: AgentPlatformClient;
  private state: SessionState;
  private accessToken: string | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** One refresh at a time: the token rotates, and presenting a spent one revokes the family. */
  private refreshing: Promise<boolean> | undefined;
  private readonly listeners = new Set<Listener>();

  /** The platform's address, without `/api/v1`. */
  constructor(readonly baseUrl: string) {
    this.publicClient = createClient({ baseUrl });
    this.client = createClient({ baseUrl, fetch: (request) => this.send(request) });
    this.state = { status: storage.get(REFRESH_TOKEN_KEY) ? 'restoring' : 'signed-out', user: undefined, tenantId: storage.get(TENANT_KEY) };
  }

  get snapshot(): SessionState {
    return this.state;
  }

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** On start: turns a kept refresh token into a session, or forgets it. */
  async restore(): Promise<void> {
    if (this.state.status !== 'restoring') return;
    if (!(await this.refresh())) return;
    await this.loadUser();
  }

  async signIn(tokens: Tokens): Promise<void> {
    this.accept(tokens);
    await this.loadUser();
  }

  signOut(): void {
    clearTimeout(this.refreshTimer);
    this.accessToken = undefined;
    storage.remove(REFRESH_TOKEN_KEY);
    this.update({ status: 'signed-out', user: undefined });
  }

  switchTenant(tenantId: string): void {
    storage.set(TENANT_KEY, tenantId);
    this.update({ tenantId });
  }

  /** Re-reads the user and their tenants (after a tenant or membership changed). */
  async loadUser(): Promise<void> {
    const { data } = await this.client.GET('/api/v1/auth/me');
    if (!data) {
      this.signOut();
      return;
    }
    const kept = this.state.tenantId;
    const tenantId = data.tenants.some((tenant) => tenant.id === kept) ? kept : data.tenants[0]?.id;
    if (tenantId) storage.set(TENANT_KEY, tenantId);
    this.update({ status: 'signed-in', user: data, tenantId });
  }

  /**
   * What every call carries, added to a request: the tenant to its address, the token to its
   * headers. The client's transport uses it, and so does what the client cannot send (an upload
   * through XMLHttpRequest, whose progress fetch does not report).
   */
  authorise(url: URL, headers: Headers): void {
    const tenantId = this.state.tenantId;
    if (tenantId && !UNSCOPED_PATHS.test(url.pathname) && !url.searchParams.has('tenant_id')) url.searchParams.set('tenant_id', tenantId);
    if (this.accessToken) headers.set('Authorization', `Bearer ${this.accessToken}`);
  }

  /** After a 401: one refresh of the token (shared with any under way); whether the request is worth sending again. */
  async renewAfterUnauthorised(): Promise<boolean> {
    if (storage.get(REFRESH_TOKEN_KEY) === undefined) return false;
    return this.refresh();
  }

  /** The client's transport: the current token and tenant on every call; one refresh and retry on a 401. */
  private async send(request: Request): Promise<Response> {
    // Read once, so the retry can send it again (browsers stream request bodies only over HTTP/2).
    const body = request.body ? await request.arrayBuffer() : undefined;
    const response = await fetch(this.authorised(request, body));
    if (response.status !== 401 || !(await this.renewAfterUnauthorised())) return response;
    return fetch(this.authorised(request, body));
  }

  private authorised(request: Request, body: ArrayBuffer | undefined): Request {
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    this.authorise(url, headers);
    return new Request(url, { method: request.method, headers, body: body ?? null, signal: request.signal });
  }

  private refresh(): Promise<boolean> {
    this.refreshing ??= this.rotate().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async rotate(): Promise<boolean> {
    const refreshToken = storage.get(REFRESH_TOKEN_KEY);
    if (!refreshToken) return false;
    const { data, response } = await this.publicClient.POST('/api/v1/auth/refresh', { body: { refresh_token: refreshToken } }).catch(() => ({ data: undefined, response: undefined }));
    if (data) {
      this.accept(data);
      return true;
    }
    // Refused (spent, revoked or expired): the session is over. A network failure keeps the token.
    if (response) this.signOut();
    else if (this.state.status === 'restoring') this.update({ status: 'signed-out' });
    return false;
  }

  private accept(tokens: Tokens): void {
    this.accessToken = tokens.access_token;
    if (tokens.refresh_token) storage.set(REFRESH_TOKEN_KEY, tokens.refresh_token);
    clearTimeout(this.refreshTimer);
    const refreshInMs = Math.max(tokens.expires_in * 1000 - REFRESH_AHEAD_MS, REFRESH_AHEAD_MS);
    this.refreshTimer = setTimeout(() => void this.refresh(), refreshInMs);
  }

  private update(change: Partial<SessionState>): void {
    this.state = { ...this.state, ...change };
    for (const listener of this.listeners) listener();
  }
}

/** localStorage, or nothing where it is unavailable (private modes, blocked storage). */
const storage = {
  get(key: string): string | undefined {
    try {
      return localStorage.getItem(key) ?? undefined;
    } catch {
      return undefined;
    }
  },
  set(key: string, value: string): void {
    try {
      localStorage.setItem(key, value);
    } catch {
      // Then the session lasts as long as the page.
    }
  },
  remove(key: string): void {
    try {
      localStorage.removeItem(key);
    } catch {
      // Nothing was kept.
    }
  },
};
