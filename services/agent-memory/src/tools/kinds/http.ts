import { OutboundRequestError, SecretDecryptionError, type OutboundResponse } from '@agent-platform/kit/security';
import { checkHeaders, checkUrl } from '../tool-input.js';
import { cutText, RESULT_MAX_BYTES } from '../tool-result.js';
import { maskHeaders, openHeaders, sealHeadersOf } from '../tool-secrets.js';
import { offeredItself, type ToolCallRequest, type ToolCallServices, type ToolCalls, type ToolKind, type ToolOutcome } from './tool-kind.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** As stored: header values sealed by SecretBox (associated data `<tool id>:<header name>`). */
export interface HttpToolConfig {
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
}

/** How much of a non-2xx answer's body its error quotes, characters. */
const ERROR_BODY_CHARS = 200;

/**
 * A caller's deadline is kept by its signal (ToolRunner aborts it then); the request's own clock
 * runs this much longer, so the two never race to say why the call ended.
 */
const DEADLINE_BACKSTOP_MS = 1_000;

/**
 * `http` tools (decisions §12): one request to the tool's URL, through the guarded client (the
 * address is checked again at connect time, redirects are not followed). The arguments are the
 * JSON body, or the query string of a GET. The result is the response body, JSON when it parses,
 * else text; a body over 64 KiB is cut. A non-2xx answer, a refused address, a time-out are failed
 * outcomes whose error says which.
 */
export const httpTool: ToolKind<HttpToolConfig> = {
  label: 'HTTP endpoint',
  summary: "one request to the tool's URL with the model's arguments (the JSON body, or a GET's query string); the answer is the result",
  configHelp: '{url, method?: GET | POST (default) | PUT | PATCH | DELETE, headers?: {name: value} (answered masked)}',
  fields: [
    { key: 'url', label: 'URL', input: 'url', hint: "Called with the model's arguments as the JSON body (as the query string for GET)." },
    { key: 'method', label: 'Method', input: 'choice', choices: HTTP_METHODS, default: 'POST' },
    { key: 'headers', label: 'Headers', input: 'headers' },
  ],
  configKeys: ['url', 'method', 'headers'],
  schemas: 'own',
  platformAction: undefined,
  async check(config, save) {
    const url = await checkUrl(config, save.services.policy, save.errors);
    let method: HttpMethod = 'POST';
    if (config.method !== undefined && config.method !== null) {
      const upper = typeof config.method === 'string' ? config.method.toUpperCase() : undefined;
      if (upper !== undefined && (HTTP_METHODS as readonly string[]).includes(upper)) method = upper as HttpMethod;
      else save.errors.add('config.method', `must be one of ${HTTP_METHODS.join(', ')}`);
    }
    return { url: url ?? '', method, headers: sealHeadersOf(checkHeaders(config, save.errors), save) };
  },
  visible: (config) => ({ ...config, headers: maskHeaders(config.headers) }),
  offered: (tool) => [offeredItself(tool)],
  calls: httpCalls,
};

/** The handler of http tools' calls, given what they reach. */
export function httpCalls(services: HttpCallServices): ToolCalls {
  return { call: (request) => callHttp(request, services) };
}

type HttpCallServices = Pick<ToolCallServices, 'http' | 'secrets' | 'timeoutMs'>;

async function callHttp(request: ToolCallRequest, services: HttpCallServices): Promise<ToolOutcome> {
  const config = request.tool.config as HttpToolConfig;
  let headers: Record<string, string>;
  try {
    // Opened for this request only: the values live no longer than the call.
    headers = openHeaders(request.tool.id, config.headers, services.secrets);
  } catch (error) {
    if (error instanceof SecretDecryptionError) return failed(`the tool's header values cannot be unsealed (${error.message}); its owner must save them again`);
    throw error;
  }
  let target: { url: string; body: string | undefined };
  try {
    target = encodeArguments(config, request.arguments);
  } catch {
    return failed('the tool has an invalid URL');
  }
  // The owner's own content type (`application/vnd.api+json`) stands: they know their API.
  if (target.body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';

  const host = hostOf(target.url);
  let response: OutboundResponse;
  try {
    response = await services.http.request({
      url: target.url,
      method: config.method,
      headers,
      ...(target.body === undefined ? {} : { body: target.body }),
      timeoutMs: request.deadlineAt === undefined ? services.timeoutMs : Math.max(1, request.deadlineAt - Date.now()) + DEADLINE_BACKSTOP_MS,
      maxResponseBytes: RESULT_MAX_BYTES,
      signal: request.signal,
    });
  } catch (error) {
    if (error instanceof OutboundRequestError) return failed(describeFailure(error, host, request.signal));
    throw error;
  }
  return outcomeOf(response);
}

/**
 * The request's URL and body. GET: the arguments join the URL's own query after its parameters,
 * a string as it is and any other value as its JSON text (`n=2`, `tags=["a","b"]`); the URL's
 * own parameters come first, so a server reading the first value of a name gets the owner's.
 * Every other method: the arguments as the JSON body.
 */
export function encodeArguments(config: Pick<HttpToolConfig, 'url' | 'method'>, args: Record<string, unknown>): { url: string; body: string | undefined } {
  const url = new URL(config.url);
  // Never sent; the arguments must go before it, not into it.
  url.hash = '';
  if (config.method !== 'GET') return { url: url.toString(), body: JSON.stringify(args) };
  const pairs = Object.entries(args)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value))}`);
  // Appended as text: rebuilding through searchParams would re-encode the owner's own parameters.
  if (pairs.length > 0) url.search = url.search.length > 1 ? `${url.search.slice(1)}&${pairs.join('&')}` : pairs.join('&');
  return { url: url.toString(), body: undefined };
}

function outcomeOf(response: OutboundResponse): ToolOutcome {
  const { status } = response;
  // Only what was read is decoded; a character cut at the limit is left out rather than garbled.
  const text = new TextDecoder('utf-8').decode(response.body, { stream: response.truncated });
  if (status >= 300 && status < 400) return failed(`HTTP ${status}: redirects are not followed`);
  if (status < 200 || status >= 300) {
    // On one line; by code points, so an emoji is not cut in two. The slice before only bounds the work.
    const quoted = [...text.slice(0, 8 * ERROR_BODY_CHARS).replace(/\s+/g, ' ').trim()].slice(0, ERROR_BODY_CHARS).join('');
    return failed(quoted === '' ? `HTTP ${status}` : `HTTP ${status}: ${quoted}`);
  }
  // Part of a JSON document is no value: a cut body is text, and says it was cut.
  if (response.truncated) return { status: 'completed', result: cutText(text) };
  try {
    return { status: 'completed', result: JSON.parse(text) as unknown };
  } catch {
    return { status: 'completed', result: text };
  }
}

/** Names the host, never the URL, whose path or query often holds a token. */
function describeFailure(error: OutboundRequestError, host: string, signal: AbortSignal): string {
  switch (error.reason) {
    case 'blocked':
      return `the address of ${host} is not allowed: ${error.message}`;
    case 'timeout':
      return `request to ${host} ${error.message}`;
    case 'aborted':
      return isTimeout(signal.reason) ? `request to ${host} timed out` : `request to ${host} was cancelled`;
    case 'invalid_url':
      return `the tool has an ${error.message}`;
    case 'invalid_request':
      return `the request could not be sent: ${error.message}`;
    case 'network':
      return `request to ${host} failed: ${error.message}`;
    case 'too_large':
      return `the answer of ${host} is too large: ${error.message}`;
  }
}

function isTimeout(reason: unknown): boolean {
  return reason instanceof Error && reason.name === 'TimeoutError';
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the tool host';
  }
}

function failed(error: string): ToolOutcome {
  return { status: 'failed', error };
}
