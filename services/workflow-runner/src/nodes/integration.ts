import { hasPlaceholder, renderValue } from '../expressions/template.js';
import type { Integrations } from '../integrations/integrations.js';
import { checkString, fieldPath, isObject, onlyKeys, readString, readTemplatedValue, readTimeout, readUrl, type ConfigContext, type JsonObject } from '../workflows/graph-fields.js';
import type { NodeKind } from './node-kind.js';

export const INTEGRATION_SERVICES = ['http', 'slack', 'email'] as const;
export type IntegrationService = (typeof INTEGRATION_SERVICES)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface HttpConfig {
  service: 'http';
  /** A template; without placeholders an absolute http(s) URL. */
  url: string;
  method: HttpMethod;
  /** Values are templates. */
  headers: Record<string, string>;
  /** Any JSON; every string in it is a template. */
  body?: unknown;
  timeout_ms?: number;
}

export interface SlackConfig {
  service: 'slack';
  webhook_url: string;
  text: string;
  timeout_ms?: number;
}

export interface EmailConfig {
  service: 'email';
  to: string[];
  subject: string;
  text: string;
  timeout_ms?: number;
}

export type IntegrationConfig = HttpConfig | SlackConfig | EmailConfig;

const MAX_EMAIL_RECIPIENTS = 50;

export const integrationNode: NodeKind<IntegrationConfig, false> = {
  summary: '`http`, `slack` or `email` (through the platform\'s SMTP server)',
  configHelp: '{service: http {url, method?, headers?, body?} | slack {webhook_url, text} | email {to, subject, text}, timeout_ms?}',
  trigger: false,
  check: integrationConfig,
  /**
   * Its calls leave the platform, so it never runs twice for one execution; but an http GET is a
   * safe method (RFC 9110 §9.2.1), so a runner that takes an execution over may repeat it.
   */
  hasSideEffects: (config) => !(config.service === 'http' && config.method === 'GET'),
  behaviour: {
    waits: false,
    async run(config, ctx, services) {
      const { service, timeout_ms: _timeout, ...settings } = config;
      const rendered = renderValue(settings, ctx.scope) as Record<string, unknown>;
      const output = await services.integrations.run({ service, ...rendered } as Parameters<Integrations['run']>[0], { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
      return { output };
    },
  },
};

const KEYS: Record<IntegrationService, readonly string[]> = {
  http: ['service', 'url', 'method', 'headers', 'body', 'timeout_ms'],
  slack: ['service', 'webhook_url', 'text', 'timeout_ms'],
  email: ['service', 'to', 'subject', 'text', 'timeout_ms'],
};

const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 8_192;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/; // an RFC 9110 token
const MAX_TEXT = 100_000;
const MAX_SLACK_TEXT = 40_000; // Slack truncates beyond this
const MAX_SUBJECT = 998; // RFC 5322 line length
const MAX_ADDRESS = 254;
// A pragmatic address: dot-atom local part, host name of letters, digits and hyphens.
const EMAIL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The config of an `integration` node, by its `service`. */
function integrationConfig(config: JsonObject, ctx: ConfigContext): IntegrationConfig {
  const service = config.service;
  if (typeof service !== 'string' || !(INTEGRATION_SERVICES as readonly string[]).includes(service)) {
    const problem = service === undefined || service === null ? 'is required' : 'is not a known service';
    ctx.errors.add(fieldPath(ctx, 'service'), `${problem}; one of ${INTEGRATION_SERVICES.join(', ')}`);
    // Without a service the other keys cannot be judged; an empty http config stands in.
    return { service: 'http', url: '', method: 'POST', headers: {} };
  }
  const known = service as IntegrationService;
  onlyKeys(config, KEYS[known], ctx, `${known === 'slack' ? 'a' : 'an'} ${known} integration's config`);
  switch (known) {
    case 'http':
      return httpConfig(config, ctx);
    case 'slack':
      return slackConfig(config, ctx);
    case 'email':
      return emailConfig(config, ctx);
  }
}

function httpConfig(config: JsonObject, ctx: ConfigContext): HttpConfig {
  const result: HttpConfig = { service: 'http', url: readUrl(config, 'url', ctx) ?? '', method: readMethod(config, ctx), headers: readHeaders(config, ctx) };
  const body = readTemplatedValue(config, 'body', ctx);
  if (body !== undefined) result.body = body;
  const timeout = readTimeout(config, ctx);
  if (timeout !== undefined) result.timeout_ms = timeout;
  return result;
}

/** Default POST; any letter case, stored upper case. */
function readMethod(config: JsonObject, ctx: ConfigContext): HttpMethod {
  const method = config.method;
  if (method === undefined || method === null) return 'POST';
  const upper = typeof method === 'string' ? method.toUpperCase() : undefined;
  if (upper !== undefined && (HTTP_METHODS as readonly string[]).includes(upper)) return upper as HttpMethod;
  ctx.errors.add(fieldPath(ctx, 'method'), `must be one of ${HTTP_METHODS.join(', ')}`);
  return 'POST';
}

function readHeaders(config: JsonObject, ctx: ConfigContext): Record<string, string> {
  const headers: Record<string, string> = {};
  const value = config.headers;
  const path = fieldPath(ctx, 'headers');
  if (value === undefined || value === null) return headers;
  if (!isObject(value)) {
    ctx.errors.add(path, 'must be an object of header names to string values');
    return headers;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) {
    ctx.errors.add(path, `must have at most ${MAX_HEADERS} headers`);
    return headers;
  }
  const headerCtx = { ...ctx, path };
  for (const [name, item] of entries) {
    const itemPath = fieldPath(headerCtx, name);
    if (!HEADER_NAME.test(name)) {
      ctx.errors.add(itemPath, 'is not a valid header name');
      continue;
    }
    const checked = checkString(item, itemPath, ctx.errors, { max: MAX_HEADER_VALUE, template: true, line: true });
    if (checked !== undefined) Object.defineProperty(headers, name, { value: checked, enumerable: true, writable: true, configurable: true });
  }
  return headers;
}

function slackConfig(config: JsonObject, ctx: ConfigContext): SlackConfig {
  const result: SlackConfig = {
    service: 'slack',
    webhook_url: readUrl(config, 'webhook_url', ctx) ?? '',
    text: readString(config, 'text', ctx, { required: true, max: MAX_SLACK_TEXT, template: true }) ?? '',
  };
  const timeout = readTimeout(config, ctx);
  if (timeout !== undefined) result.timeout_ms = timeout;
  return result;
}

function emailConfig(config: JsonObject, ctx: ConfigContext): EmailConfig {
  const result: EmailConfig = {
    service: 'email',
    to: readRecipients(config, ctx),
    subject: readString(config, 'subject', ctx, { required: true, max: MAX_SUBJECT, template: true, line: true }) ?? '',
    text: readString(config, 'text', ctx, { required: true, max: MAX_TEXT, template: true }) ?? '',
  };
  const timeout = readTimeout(config, ctx);
  if (timeout !== undefined) result.timeout_ms = timeout;
  return result;
}

/** `to`: one address or a list of 1 to 50; an entry with a placeholder is checked when sent. */
function readRecipients(config: JsonObject, ctx: ConfigContext): string[] {
  const value = config.to;
  const path = fieldPath(ctx, 'to');
  if (value === undefined || value === null) {
    ctx.errors.add(path, 'is required');
    return [];
  }
  if (typeof value === 'string') return checkAddress(value, path, ctx) === undefined ? [] : [value];
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_EMAIL_RECIPIENTS) {
    ctx.errors.add(path, `must be an e-mail address or an array of 1 to ${MAX_EMAIL_RECIPIENTS} of them`);
    return [];
  }
  return value.flatMap((item: unknown, index) => checkAddress(item, `${path}[${index}]`, ctx) ?? []);
}

function checkAddress(value: unknown, path: string, ctx: ConfigContext): string | undefined {
  const address = checkString(value, path, ctx.errors, { max: MAX_ADDRESS, template: true, line: true });
  if (address === undefined || hasPlaceholder(address)) return address;
  if (!EMAIL.test(address)) {
    ctx.errors.add(path, 'must be an e-mail address');
    return undefined;
  }
  return address;
}
