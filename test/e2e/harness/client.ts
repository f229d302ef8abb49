import { randomBytes, randomInt } from 'node:crypto';
import { inject } from 'vitest';

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

/** A REST client acting from its own client IP, so per-IP limits of one test never touch another. */
export class Api {
  readonly baseUrl: string;
  readonly clientIp: string;

  constructor(baseUrl: string = inject('baseUrl'), clientIp: string = randomTestIp()) {
    this.baseUrl = baseUrl;
    this.clientIp = clientIp;
  }

  async request<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(path, this.baseUrl);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { 'x-forwarded-for': this.clientIp, ...options.headers };
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
    const response = await fetch(url, { method, headers, body });
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
}

/** Registers a fresh user (and so a fresh tenant) and logs in. */
export async function newAccount(api: Api, fields: { full_name?: string; company?: string } = {}): Promise<Account> {
  const email = uniqueEmail();
  const registered = await api.post<{ id: string; tenant_id: string }>('/api/v1/auth/register', {
    json: { email, password: PASSWORD, ...fields },
  });
  if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  const login = await api.post<{ access_token: string; refresh_token: string }>('/api/v1/auth/login', {
    form: { username: email, password: PASSWORD },
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return {
    email,
    password: PASSWORD,
    userId: registered.body.id,
    tenantId: registered.body.tenant_id,
    accessToken: login.body.access_token,
    refreshToken: login.body.refresh_token,
  };
}

export async function newApiKey(api: Api, account: Account, scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const created = await api.post<{ id: string; key: string }>('/api/v1/auth/api-keys', {
    token: account.accessToken,
    json: { name: `key-${randomBytes(3).toString('hex')}`, scopes, ...extra },
  });
  if (created.status !== 201) throw new Error(`api key creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const id = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`);
