import type { OutboundHttp, OutboundResponse } from '@agent-platform/kit/security';
import { hostOf, IntegrationError, outboundFailure, snippet, type IntegrationContext } from './integration.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpIntegrationConfig {
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
  /** A string is sent as is; any other JSON value as JSON. */
  body?: unknown;
}

export interface HttpIntegrationOutput {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed when the response is JSON, else its text. */
  body: unknown;
}

/** Most bytes of a response body a node reads (1 MiB). */
export const MAX_HTTP_RESPONSE_BYTES = 1_024 * 1_024;

const WITHOUT_BODY: ReadonlySet<HttpMethod> = new Set(['GET', 'DELETE']);

/**
 * The `http` integration (decisions §7): one request through the guarded client. Any non-2xx
 * fails the node, quoting the start of the answer; a 3xx too, since redirects are not followed.
 */
export async function runHttp(http: OutboundHttp, config: HttpIntegrationConfig, ctx: IntegrationContext): Promise<HttpIntegrationOutput> {
  const host = hostOf(config.url);
  const { body, contentType } = encodeBody(config);
  const headers = { ...config.headers };
  if (contentType !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = contentType;

  let response: OutboundResponse;
  try {
    response = await http.request({
      url: config.url,
      method: config.method,
      headers,
      body,
      timeoutMs: ctx.timeoutMs,
      maxResponseBytes: MAX_HTTP_RESPONSE_BYTES,
      signal: ctx.signal,
    });
  } catch (error) {
    throw outboundFailure(error, host);
  }

  const { status } = response;
  if (status >= 300 && status < 400) throw new IntegrationError(`HTTP ${status} from ${host}: redirects are not followed`);
  if (status < 200 || status >= 300) {
    const quoted = snippet(decodeText(response));
    throw new IntegrationError(quoted === '' ? `HTTP ${status} from ${host}` : `HTTP ${status} from ${host}: ${quoted}`);
  }
  return { status, headers: response.headers, body: decodeBody(response, host) };
}

function encodeBody(config: HttpIntegrationConfig): { body?: string; contentType?: string } {
  if (config.body === undefined || WITHOUT_BODY.has(config.method)) return {};
  if (typeof config.body === 'string') return { body: config.body };
  const json = JSON.stringify(config.body);
  // Only values JSON has no form for (a function, a symbol) come back undefined; the validated config holds none.
  return json === undefined ? {} : { body: json, contentType: 'application/json' };
}

/** JSON (`application/json`, `…+json`) parsed, anything else as text; JSON that does not parse stays text. */
function decodeBody(response: OutboundResponse, host: string): unknown {
  const json = isJson(response.headers['content-type']);
  // Part of a JSON document is not a value; part of a text still is.
  if (json && response.truncated) throw new IntegrationError(`the JSON response from ${host} is larger than 1 MiB`);
  const text = decodeText(response);
  if (!json || text === '') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isJson(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

/** The body as text in the charset the response declares (UTF-8 when it declares none or an unknown one). */
function decodeText(response: OutboundResponse): string {
  const charset = /;\s*charset="?([^";\s]+)"?/i.exec(response.headers['content-type'] ?? '')?.[1];
  const decoder = (() => {
    try {
      return new TextDecoder(charset ?? 'utf-8');
    } catch {
      return new TextDecoder('utf-8');
    }
  })();
  return decoder.decode(response.body);
}
