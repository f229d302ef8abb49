import { randomBytes, randomInt } from 'node:crypto';
import { createClient, type AgentPlatformClient, type RequestBody } from '@agent-platform/client';
import { inject } from 'vitest';
import { expectStatus } from './results.js';

/** What a raw request answers. */
export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  json?: unknown;
  form?: Record<string, string>;
  /** Sent as-is, with `contentType`. */
  raw?: string | Buffer;
  contentType?: string;
  token?: string;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
}

/**
 * A caller of the platform acting from its own client IP (the suites' gateways trust
 * X-Forwarded-For), so per-IP limits of one test never touch another. Happy paths go through
 * @agent-platform/client, typed by the OpenAPI document, so a drift of the contract fails
 * type-checking: `api.anonymous`, `api.withToken(token)`, `api.withKey(key)`, or an account's
 * `client`. `request` and its shorthands send what the contract forbids or does not describe.
 */
export class Api {
  readonly baseUrl: string;
  readonly clientIp: string;
  /** The typed client without a credential: registration, login, refresh and the probes. */
  readonly anonymous: AgentPlatformClient;

  /** fetch from this caller's client IP (unless a raw request spoofs another); the typed clients send through it. */
  readonly fetch: typeof globalThis.fetch = (input, init) => {
    const request = new Request(input, init);
    if (!request.headers.has('x-forwarded-for')) request.headers.set('x-forwarded-for', this.clientIp);
    return fetch(request);
  };

  constructor(baseUrl: string = inject('baseUrl'), clientIp: string = randomTestIp()) {
    this.baseUrl = baseUrl;
    this.clientIp = clientIp;
    this.anonymous = createClient({ baseUrl, fetch: this.fetch });
  }

  /** The typed client of a signed-in user. */
  withToken(accessToken: string): AgentPlatformClient {
    return createClient({ baseUrl: this.baseUrl, accessToken, fetch: this.fetch });
  }

  /** The typed client of an API key (or of any string sent as one: garbage, a revoked key). */
  withKey(apiKey: string): AgentPlatformClient {
    return createClient({ baseUrl: this.baseUrl, apiKey, fetch: this.fetch });
  }

  /**
   * A request exactly as written, past the typed client: for bodies, values, content types and
   * headers the contract forbids, and for addresses it does not describe (/hooks, the /v1 alias,
   * /openapi.json, /docs). Each use says why it is raw.
   */
  async request<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (options.raw !== undefined) {
      body = options.raw;
      if (options.contentType) headers['content-type'] = options.contentType;
    }
    const response = await this.fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if (response.headers.get('content-type')?.includes('application/json') && text !== '') parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get<T = Record<string, unknown>>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = Record<string, unknown>>(path: string, options?: RequestOptions) {
    return this.request<T>('POST', path, options);
  }
  patch<T = Record<string, unknown>>(path: string, options?: RequestOptions) {
    return this.request<T>('PATCH', path, options);
  }
  delete<T = Record<string, unknown>>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }
}

/** An address in TEST-NET-2/3 space (RFC 5737), random per call. */
export function randomTestIp(): string {
  return `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

/**
 * An address in TEST-NET-1 (192.0.2.0/24), which `randomTestIp` never gives: for a caller that
 * exhausts its address's limit, so that no other test's caller, drawn at random, shares its
 * refusals (one did, once in a few hundred runs, from 65,000 addresses).
 */
export function exhaustibleTestIp(): string {
  return `192.0.2.${randomInt(1, 255)}`;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(6).toString('hex')}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

export interface Account {
  email: string;
  password: string;
  userId: string;
  tenantId: string;
  accessToken: string;
  refreshToken: string;
  /** The typed client acting as this user, from the client IP of the `Api` that made the account. */
  client: AgentPlatformClient;
}

/** Registers a fresh user (and so a fresh tenant) and logs in with a form body, as OAuth2 clients do. */
export async function newAccount(api: Api, fields: { full_name?: string; company?: string } = {}): Promise<Account> {
  const email = uniqueEmail();
  const registered = expectStatus(await api.anonymous.POST('/api/v1/auth/register', { body: { email, password: PASSWORD, ...fields } }), 201);
  const login = expectStatus(
    await api.anonymous.POST('/api/v1/auth/login', {
      body: { username: email, password: PASSWORD },
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
  );
  return {
    email,
    password: PASSWORD,
    userId: registered.id,
    tenantId: registered.tenant_id,
    accessToken: login.access_token,
    refreshToken: login.refresh_token,
    client: api.withToken(login.access_token),
  };
}

type ApiKeyBody = RequestBody<'/api/v1/auth/api-keys', 'post'>;

/** Creates an API key as `account`; `client` acts with it, from `api`'s client IP. */
export async function newApiKey(
  api: Api,
  account: Account,
  scopes: ApiKeyBody['scopes'],
  extra: Partial<ApiKeyBody> = {},
): Promise<{ id: string; key: string; client: AgentPlatformClient }> {
  const created = expectStatus(await account.client.POST('/api/v1/auth/api-keys', { body: { name: `key-${randomBytes(3).toString('hex')}`, scopes, ...extra } }), 201);
  return { id: created.id, key: created.key, client: api.withKey(created.key) };
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const id = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
