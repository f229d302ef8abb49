import { CHAT_MESSAGE_MAX, isId } from '@agent-platform/kit';
import { Cron } from 'croner';
import { compileCondition, MAX_EXPRESSION_LENGTH } from '../expressions/expressions.js';
import { checkTarget, fieldPath, isObject, onlyKeys, readString, readTimeout, type ConfigContext, type JsonObject } from './graph-fields.js';
import { integrationConfig } from './graph-integration.js';
import {
  DEFAULT_TIMEZONE,
  MAX_RULES,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  MAX_WAIT_SECONDS,
  type AgentConfig,
  type ApprovalConfig,
  type ConditionConfig,
  type ConditionRule,
  type NodeOfType,
  type NodeType,
  type ScheduleConfig,
  type WaitConfig,
  type WebhookConfig,
} from './graph-types.js';

const MAX_WEBHOOK_PATH = 200;
// RFC 3986 path characters (unreserved, sub-delims, ':' and '@', percent-escapes) in '/' segments.
const WEBHOOK_PATH = /^(?:\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*)+$/;
const MAX_CRON = 200;
// The rendered end user is bound by the agent service (128 characters); its template may say more.
const MAX_USER_ID_TEMPLATE = 1_000;

/** Every config key each type accepts, in the order error messages list them. */
const KEYS: Record<Exclude<NodeType, 'integration'>, readonly string[]> = {
  webhook: ['path'],
  schedule: ['cron', 'timezone'],
  agent: ['agent_id', 'message', 'user_id', 'timeout_ms'],
  condition: ['rules', 'timeout_ms'],
  approval: ['message', 'timeout_seconds'],
  wait: ['seconds', 'until'],
};

/** The typed config of a node of `type`; problems go to ctx.errors with a path under ctx.path. */
export function checkNodeConfig<T extends NodeType>(type: T, config: JsonObject, ctx: ConfigContext): NodeOfType<T>['config'];
export function checkNodeConfig(type: NodeType, config: JsonObject, ctx: ConfigContext): NodeOfType<NodeType>['config'] {
  if (type === 'integration') return integrationConfig(config, ctx);
  onlyKeys(config, KEYS[type], ctx, `${type === 'agent' || type === 'approval' ? 'an' : 'a'} ${type} node's config`);
  switch (type) {
    case 'webhook':
      return webhookConfig(config, ctx);
    case 'schedule':
      return scheduleConfig(config, ctx);
    case 'agent':
      return agentConfig(config, ctx);
    case 'condition':
      return conditionConfig(config, ctx);
    case 'approval':
      return approvalConfig(config, ctx);
    case 'wait':
      return waitConfig(config, ctx);
  }
}

function approvalConfig(config: JsonObject, ctx: ConfigContext): ApprovalConfig {
  const message = readString(config, 'message', ctx, { required: false, max: CHAT_MESSAGE_MAX, template: true }) ?? '';
  const timeout = readSeconds(config, 'timeout_seconds', ctx) ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  return { message, timeout_seconds: timeout };
}

function waitConfig(config: JsonObject, ctx: ConfigContext): WaitConfig {
  const given = (['seconds', 'until'] as const).filter((key) => config[key] !== undefined && config[key] !== null);
  if (given.length !== 1) {
    ctx.errors.add(ctx.path, given.length === 0 ? 'needs seconds (a delay) or until (an ISO 8601 time)' : 'takes seconds or until, not both');
    return { seconds: 1 };
  }
  if (given[0] === 'seconds') return { seconds: readSeconds(config, 'seconds', ctx) ?? 1 };
  const until = readString(config, 'until', ctx, { required: true, max: 64 });
  if (until !== undefined && !isInstant(until)) ctx.errors.add(fieldPath(ctx, 'until'), 'must be an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z');
  return { until: until ?? '' };
}

// An offset is required: a time without one would mean the runner's zone, which nobody chose.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function isInstant(text: string): boolean {
  const match = INSTANT.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Date.parse rolls 02-31 over into March; the calendar day must exist as written.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Whole seconds, 1 to 30 days. */
function readSeconds(config: JsonObject, key: string, ctx: ConfigContext): number | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_WAIT_SECONDS) {
    ctx.errors.add(fieldPath(ctx, key), `must be an integer from 1 to ${MAX_WAIT_SECONDS} (seconds, 30 days)`);
    return undefined;
  }
  return value;
}

function webhookConfig(config: JsonObject, ctx: ConfigContext): WebhookConfig {
  const path = readString(config, 'path', ctx, { required: false, max: MAX_WEBHOOK_PATH }) ?? '';
  const problem = path === '' ? undefined : webhookPathProblem(path);
  if (problem) ctx.errors.add(fieldPath(ctx, 'path'), problem);
  return { path };
}

function webhookPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must begin with /';
  if (!WEBHOOK_PATH.test(path)) return "must hold only URL path characters: letters, digits, / - . _ ~ ! $ & ' ( ) * + , ; = : @ and %XX escapes";
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'must not have . or .. segments';
  return undefined;
}

function scheduleConfig(config: JsonObject, ctx: ConfigContext): ScheduleConfig {
  const cron = readString(config, 'cron', ctx, { required: true, max: MAX_CRON }) ?? '';
  let timezone = readString(config, 'timezone', ctx, { required: false, max: 100 }) ?? DEFAULT_TIMEZONE;
  if (!isTimeZone(timezone)) {
    ctx.errors.add(fieldPath(ctx, 'timezone'), 'must be an IANA time zone name, e.g. Europe/Berlin');
    timezone = DEFAULT_TIMEZONE;
  }
  if (cron !== '') {
    const problem = cronProblem(cron, timezone);
    if (problem) ctx.errors.add(fieldPath(ctx, 'cron'), problem);
  }
  return { cron, timezone };
}

function isTimeZone(name: string): boolean {
  if (name === '' || /^[+-]/.test(name)) return false; // Intl also takes `+02:00`, which is no IANA name
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Parsed by croner as the scheduler will: 5 fields, or 6 with leading seconds. */
function cronProblem(cron: string, timezone: string): string | undefined {
  let job: Cron | undefined;
  try {
    job = new Cron(cron, { paused: true, mode: '5-or-6-parts', timezone });
    return job.nextRun() === null ? 'must fire at some time (this expression never does)' : undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    return `must be a cron expression of 5 fields (or 6 with leading seconds): ${message}`;
  } finally {
    job?.stop();
  }
}

function agentConfig(config: JsonObject, ctx: ConfigContext): AgentConfig {
  const agentId = readString(config, 'agent_id', ctx, { required: true, max: 100 });
  if (agentId !== undefined && !isId('agent', agentId)) ctx.errors.add(fieldPath(ctx, 'agent_id'), 'must be an agent id (agt_…)');
  const result: AgentConfig = { agent_id: agentId ?? '' };
  const message = readString(config, 'message', ctx, { required: false, max: CHAT_MESSAGE_MAX, template: true });
  if (message !== undefined) result.message = message;
  const userId = readString(config, 'user_id', ctx, { required: false, max: MAX_USER_ID_TEMPLATE, line: true, template: true });
  if (userId !== undefined) result.user_id = userId;
  const timeout = readTimeout(config, ctx);
  if (timeout !== undefined) result.timeout_ms = timeout;
  return result;
}

function conditionConfig(config: JsonObject, ctx: ConfigContext): ConditionConfig {
  const result: ConditionConfig = { rules: [] };
  const timeout = readTimeout(config, ctx);
  if (timeout !== undefined) result.timeout_ms = timeout;
  const rules = config.rules;
  const path = fieldPath(ctx, 'rules');
  if (rules === undefined || rules === null) {
    ctx.errors.add(path, 'is required');
    return result;
  }
  // No rules is allowed: the node then chooses no branch, and everything after it is skipped.
  if (!Array.isArray(rules) || rules.length > MAX_RULES) {
    ctx.errors.add(path, `must be an array of at most ${MAX_RULES} rules`);
    return result;
  }
  rules.forEach((rule: unknown, index) => {
    const checked = checkRule(rule, `${path}[${index}]`, index === rules.length - 1, ctx);
    if (checked) result.rules.push(checked);
  });
  return result;
}

/** `{if, goto}`, or `{else}` as the last rule. */
function checkRule(rule: unknown, path: string, last: boolean, ctx: ConfigContext): ConditionRule | undefined {
  if (!isObject(rule) || ('else' in rule && ('if' in rule || 'goto' in rule))) {
    ctx.errors.add(path, 'must be either {"if": <expression>, "goto": <node id>} or {"else": <node id>}');
    return undefined;
  }
  const ruleCtx = { ...ctx, path };
  if ('else' in rule) {
    onlyKeys(rule, ['else'], ruleCtx, 'an else rule');
    if (!last) ctx.errors.add(path, 'must be the last rule: an else rule ends the list');
    const target = checkTarget(rule.else, `${path}.else`, ctx);
    return target === undefined ? undefined : { else: target };
  }
  onlyKeys(rule, ['if', 'goto'], ruleCtx, 'a rule');
  const source = readString(rule, 'if', ruleCtx, { required: true, max: MAX_EXPRESSION_LENGTH });
  if (source !== undefined) {
    const compiled = compileCondition(source);
    if (typeof compiled === 'string') ctx.errors.add(`${path}.if`, compiled);
  }
  if (rule.goto === undefined || rule.goto === null) {
    ctx.errors.add(`${path}.goto`, 'is required');
    return undefined;
  }
  const target = checkTarget(rule.goto, `${path}.goto`, ctx);
  return source === undefined || target === undefined ? undefined : { if: source, goto: target };
}
