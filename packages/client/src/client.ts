import createOpenApiClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';
import type { ApiError } from './types.js';

/** The openapi-fetch client, typed by the REST API's OpenAPI document; JSON bodies by default. */
export type AgentPlatformClient = Client<paths, 'application/json'>;

export interface CreateClientOptions {
  /** The platform's address without the `/api/v1` prefix, which every path carries: `https://api.example.com`. */
  baseUrl: string;
  /** An API key (`ap_live_…`), sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** An access token from `/auth/login` or `/auth/refresh`, sent as `Authorization: Bearer <token>`. */
  accessToken?: string;
  /** The fetch to send requests with (the client calls it with one Request); default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client of the REST API: `client.GET('/api/v1/auth/me')`,
 * `client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id } }, body })`.
 * Each call resolves to `{ data, response }` or, when the API answers an error, `{ error, response }`.
 * Without a credential only the unauthenticated operations (register, login, refresh) succeed.
 */
export function createClient(options: CreateClientOptions): AgentPlatformClient {
  if (options.apiKey !== undefined && options.accessToken !== undefined) {
    throw new TypeError('createClient: give either apiKey or accessToken, not both');
  }
  const credential = options.apiKey ?? options.accessToken;
  return createOpenApiClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(credential === undefined ? {} : { headers: { Authorization: `Bearer ${credential}` } }),
  });
}

/** A call answered with an error status where the caller wanted a result (`streamChat` before its stream begins). */
export class ApiResponseError extends Error {
  override readonly name = 'ApiResponseError';
  readonly status: number;
  /** The API's error body (decisions §2); undefined when something else answered (a proxy's page). */
  readonly apiError: ApiError | undefined;
  /** The body as received: parsed JSON, or text. */
  readonly body: unknown;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const apiError = isApiError(body) ? body : undefined;
    super(apiError ? `${response.status} ${apiError.error}: ${apiError.message}` : `${response.status} ${response.statusText}`.trimEnd());
    this.status = response.status;
    this.apiError = apiError;
    this.body = body;
    this.response = response;
  }
}

export function isApiError(value: unknown): value is ApiError {
  return typeof value === 'object' && value !== null && typeof (value as ApiError).error === 'string' && typeof (value as ApiError).message === 'string';
}
