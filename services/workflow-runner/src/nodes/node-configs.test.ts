import { DomainError, FieldErrors, newId, type FieldError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { checkGraph, type WorkflowNode } from '../workflows/graph.js';

const agentId = newId('agent');
// Node 0 is always a plain agent, so the node under test is nodes[1] and targets exist.
const target = { id: 'next', type: 'agent', config: { agent_id: agentId } };

function check(type: string, config: unknown): { node: WorkflowNode | undefined; problems: FieldError[] } {
  const errors = new FieldErrors();
  const graph = checkGraph([target, { id: 'node', type, config }, { ...target, id: 'other' }], [], errors);
  try {
    errors.throwIfAny();
    return { node: graph.nodes[1], problems: [] };
  } catch (error) {
    if (error instanceof DomainError) return { node: undefined, problems: error.details };
    throw error;
  }
}

const fieldsOf = (type: string, config: unknown) => check(type, config).problems.map((problem) => problem.field);
const configOf = (type: string, config: unknown) => {
  const { node, problems } = check(type, config);
  expect(problems).toEqual([]);
  return node?.config;
};

describe('webhook config', () => {
  it.each([
    [{ path: '/orders/new' }, { path: '/orders/new' }],
    [{}, { path: '' }],
    [{ path: null }, { path: '' }],
    [{ path: "/a-b_c.d~e/!$&'()*+,;=:@/%20" }, { path: "/a-b_c.d~e/!$&'()*+,;=:@/%20" }],
  ])('accepts %j', (config, expected) => {
    expect(configOf('webhook', config)).toEqual(expected);
  });

  it.each([
    ['no leading slash', { path: 'orders' }, ['nodes[1].config.path'], /begin with \//],
    ['a query', { path: '/orders?x=1' }, ['nodes[1].config.path'], /URL path characters/],
    ['a space', { path: '/a b' }, ['nodes[1].config.path'], /URL path characters/],
    ['a bad escape', { path: '/a%zz' }, ['nodes[1].config.path'], /URL path characters/],
    ['a .. segment', { path: '/a/../b' }, ['nodes[1].config.path'], /segments/],
    ['201 characters', { path: `/${'a'.repeat(200)}` }, ['nodes[1].config.path'], /at most 200/],
    ['a number', { path: 5 }, ['nodes[1].config.path'], /string/],
    ['an unknown key', { path: '/a', secret: 'x' }, ['nodes[1].config.secret'], /not a key of a webhook node's config; allowed: path/],
  ])('refuses %s', (_name, config, expected, message) => {
    const { problems } = check('webhook', config);
    expect(problems.map((problem) => problem.field)).toEqual(expected);
    expect(problems[0]?.message).toMatch(message);
  });
});

describe('schedule config', () => {
  it.each([
    [{ cron: '*/5 * * * *' }, { cron: '*/5 * * * *', timezone: 'UTC' }],
    [{ cron: '30 0 9 * * MON-FRI', timezone: 'Europe/Berlin' }, { cron: '30 0 9 * * MON-FRI', timezone: 'Europe/Berlin' }],
    [{ cron: '0 0 L * *', timezone: 'America/New_York' }, { cron: '0 0 L * *', timezone: 'America/New_York' }],
  ])('accepts %j', (config, expected) => {
    expect(configOf('schedule', config)).toEqual(expected);
  });

  it.each([
    ['no cron', {}, ['nodes[1].config.cron'], /required/],
    ['4 fields', { cron: '* * * *' }, ['nodes[1].config.cron'], /5 fields/],
    ['7 fields', { cron: '0 0 0 1 1 * 2030' }, ['nodes[1].config.cron'], /5 fields/],
    ['minute 61', { cron: '61 * * * *' }, ['nodes[1].config.cron'], /minute/],
    ['a date that never comes', { cron: '0 0 30 2 *' }, ['nodes[1].config.cron'], /never/],
    ['an unknown time zone', { cron: '* * * * *', timezone: 'Mars/Base' }, ['nodes[1].config.timezone'], /IANA/],
    ['an offset for a time zone', { cron: '* * * * *', timezone: '+02:00' }, ['nodes[1].config.timezone'], /IANA/],
    ['an unknown key', { cron: '* * * * *', every: 5 }, ['nodes[1].config.every'], /allowed: cron, timezone/],
    ['a timeout', { cron: '* * * * *', timeout_ms: 5 }, ['nodes[1].config.timeout_ms'], /not a key/],
  ])('refuses %s', (_name, config, expected, message) => {
    const { problems } = check('schedule', config);
    expect(problems.map((problem) => problem.field)).toEqual(expected);
    expect(problems[0]?.message).toMatch(message);
  });
});

describe('agent config', () => {
  it('accepts an agent id, a message template, an end user template and a timeout', () => {
    expect(configOf('agent', { agent_id: agentId })).toEqual({ agent_id: agentId });
    expect(configOf('agent', { agent_id: agentId, message: 'Hi {{ input.name }}', user_id: '{{ input.customer.id }}', timeout_ms: 300_000 })).toEqual({
      agent_id: agentId,
      message: 'Hi {{ input.name }}',
      user_id: '{{ input.customer.id }}',
      timeout_ms: 300_000,
    });
  });

  it.each([
    ['no agent id', {}, ['nodes[1].config.agent_id']],
    ['another kind of id', { agent_id: newId('workflow') }, ['nodes[1].config.agent_id']],
    ['a bad template', { agent_id: agentId, message: 'Hi {{ input.name' }, ['nodes[1].config.message']],
    ['a bad end user template', { agent_id: agentId, user_id: '{{ input.customer' }, ['nodes[1].config.user_id']],
    ['an end user across lines', { agent_id: agentId, user_id: 'ana\nben' }, ['nodes[1].config.user_id']],
    ['an end user that is not text', { agent_id: agentId, user_id: 42 }, ['nodes[1].config.user_id']],
    ['a timeout of 0', { agent_id: agentId, timeout_ms: 0 }, ['nodes[1].config.timeout_ms']],
    ['a timeout over 5 minutes', { agent_id: agentId, timeout_ms: 300_001 }, ['nodes[1].config.timeout_ms']],
    ['a fractional timeout', { agent_id: agentId, timeout_ms: 1.5 }, ['nodes[1].config.timeout_ms']],
    ['a timeout as text', { agent_id: agentId, timeout_ms: '1000' }, ['nodes[1].config.timeout_ms']],
    ['an unknown key', { agent_id: agentId, model: 'x' }, ['nodes[1].config.model']],
  ])('refuses %s', (_name, config, expected) => {
    expect(fieldsOf('agent', config)).toEqual(expected);
  });
});

describe('condition config', () => {
  it('accepts if rules followed by an else rule', () => {
    const rules = [{ if: 'input.amount > 100', goto: 'next' }, { if: 'has(input.vip)', goto: 'other' }, { else: 'other' }];
    expect(configOf('condition', { rules, timeout_ms: 1_000 })).toEqual({ rules, timeout_ms: 1_000 });
    expect(configOf('condition', { rules: [{ if: 'true', goto: 'next' }] })).toEqual({ rules: [{ if: 'true', goto: 'next' }] });
    // No rules: the node chooses no branch (an end of the flow).
    expect(configOf('condition', { rules: [] })).toEqual({ rules: [] });
  });

  it.each([
    ['no rules', {}, ['nodes[1].config.rules']],
    ['rules that are no list', { rules: 'true' }, ['nodes[1].config.rules']],
    ['51 rules', { rules: Array.from({ length: 51 }, () => ({ if: 'true', goto: 'next' })) }, ['nodes[1].config.rules']],
    ['a rule that is no object', { rules: ['true'] }, ['nodes[1].config.rules[0]']],
    ['a rule with if and else', { rules: [{ if: 'true', goto: 'next', else: 'other' }] }, ['nodes[1].config.rules[0]']],
    ['a bad expression', { rules: [{ if: 'true', goto: 'next' }, { if: 'input.amount >', goto: 'next' }] }, ['nodes[1].config.rules[1].if']],
    ['a non-bool expression', { rules: [{ if: '1 + 2', goto: 'next' }] }, ['nodes[1].config.rules[0].if']],
    ['an if that is no string', { rules: [{ if: true, goto: 'next' }] }, ['nodes[1].config.rules[0].if']],
    ['a missing goto', { rules: [{ if: 'true' }] }, ['nodes[1].config.rules[0].goto']],
    ['a missing if', { rules: [{ goto: 'next' }] }, ['nodes[1].config.rules[0].if']],
    ['an unknown goto', { rules: [{ if: 'true', goto: 'nowhere' }] }, ['nodes[1].config.rules[0].goto']],
    ['a goto to itself', { rules: [{ if: 'true', goto: 'node' }] }, ['nodes[1].config.rules[0].goto']],
    ['an unknown else', { rules: [{ if: 'true', goto: 'next' }, { else: 'nowhere' }] }, ['nodes[1].config.rules[1].else']],
    ['an else to itself', { rules: [{ else: 'node' }] }, ['nodes[1].config.rules[0].else']],
    ['an else before the end', { rules: [{ else: 'next' }, { if: 'true', goto: 'other' }] }, ['nodes[1].config.rules[0]']],
    ['two else rules', { rules: [{ if: 'true', goto: 'next' }, { else: 'next' }, { else: 'other' }] }, ['nodes[1].config.rules[1]']],
    ['an unknown rule key', { rules: [{ if: 'true', goto: 'next', then: 'x' }] }, ['nodes[1].config.rules[0].then']],
    ['an unknown config key', { rules: [{ else: 'next' }], mode: 'all' }, ['nodes[1].config.mode']],
  ])('refuses %s', (_name, config, expected) => {
    expect(fieldsOf('condition', config)).toEqual(expected);
  });

  it('explains a bad expression', () => {
    expect(check('condition', { rules: [{ if: 'amount > 1', goto: 'next' }] }).problems).toEqual([
      { field: 'nodes[1].config.rules[0].if', message: 'unknown variable: amount (at character 1)' },
    ]);
  });
});

describe('approval config (decisions §13)', () => {
  it.each([
    [{}, { message: '', timeout_seconds: 86_400 }],
    [{ message: 'Refund {{ input.amount }}?', timeout_seconds: 60 }, { message: 'Refund {{ input.amount }}?', timeout_seconds: 60 }],
    [{ timeout_seconds: 2_592_000 }, { message: '', timeout_seconds: 2_592_000 }],
  ])('accepts %j', (config, expected) => {
    expect(configOf('approval', config)).toEqual(expected);
  });

  it.each([
    ['a time-out past 30 days', { timeout_seconds: 2_592_001 }, ['nodes[1].config.timeout_seconds']],
    ['a fractional time-out', { timeout_seconds: 1.5 }, ['nodes[1].config.timeout_seconds']],
    ['a broken template', { message: 'Hi {{ input.' }, ['nodes[1].config.message']],
    ['an unknown key', { timeout_ms: 5 }, ['nodes[1].config.timeout_ms']],
  ])('refuses %s', (_name, config, fields) => {
    expect(fieldsOf('approval', config)).toEqual(fields);
  });
});

describe('wait config (decisions §13)', () => {
  it.each([
    [{ seconds: 5 }, { seconds: 5 }],
    [{ until: '2026-12-01T09:00:00Z' }, { until: '2026-12-01T09:00:00Z' }],
    [{ until: '2026-12-01T09:00:00.250+01:00' }, { until: '2026-12-01T09:00:00.250+01:00' }],
  ])('accepts %j', (config, expected) => {
    expect(configOf('wait', config)).toEqual(expected);
  });

  it.each([
    ['neither', {}, ['nodes[1].config']],
    ['both', { seconds: 5, until: '2026-12-01T09:00:00Z' }, ['nodes[1].config']],
    ['zero seconds', { seconds: 0 }, ['nodes[1].config.seconds']],
    ['a time without its offset', { until: '2026-12-01T09:00:00' }, ['nodes[1].config.until']],
    ['no time at all', { until: 'tomorrow' }, ['nodes[1].config.until']],
    ['an impossible date', { until: '2026-02-31T09:00:00Z' }, ['nodes[1].config.until']],
  ])('refuses %s', (_name, config, fields) => {
    expect(fieldsOf('wait', config)).toEqual(fields);
  });
});
