import { compileCondition, evaluateCondition, MAX_EXPRESSION_LENGTH } from '../expressions/expressions.js';
import { checkTarget, isObject, onlyKeys, readString, readTimeout, fieldPath, type ConfigContext, type JsonObject } from '../workflows/graph-fields.js';
import { NodeFailure, type NodeContext, type NodeKind, type NodeResult } from './node-kind.js';

export type ConditionRule = { if: string; goto: string } | { else: string };

export interface ConditionConfig {
  /** `if` rules in order, then at most one `else` rule. */
  rules: ConditionRule[];
  timeout_ms?: number;
}

const MAX_RULES = 50;

export const conditionNode: NodeKind<ConditionConfig, false> = {
  summary: 'CEL rules choosing the branch that runs',
  configHelp: '{rules: [{if: CEL, goto: node id} …, {else: node id}], timeout_ms?}',
  trigger: false,
  check(config, ctx) {
    onlyKeys(config, ['rules', 'timeout_ms'], ctx, "a condition node's config");
    return conditionConfig(config, ctx);
  },
  hasSideEffects: () => false,
  targets: (config) => config.rules.map((rule) => ('else' in rule ? rule.else : rule.goto)),
  behaviour: { waits: false, run: (config, ctx) => Promise.resolve(choose(config.rules, ctx)) },
};

/** decisions §7: the rules in order, the first true one wins, else the `else` target. */
function choose(rules: readonly ConditionRule[], ctx: NodeContext): NodeResult {
  for (const [index, rule] of rules.entries()) {
    if ('else' in rule) return { output: { rule: 'else', target: rule.else }, choice: rule.else };
    const compiled = compileCondition(rule.if);
    if (typeof compiled === 'string') throw new NodeFailure(`rule ${index + 1}: ${compiled}`);
    let matched: boolean;
    try {
      matched = evaluateCondition(compiled, ctx.scope);
    } catch (error) {
      throw new NodeFailure(`rule ${index + 1}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (matched) return { output: { rule: index, target: rule.goto }, choice: rule.goto };
  }
  return { output: { rule: null, target: null }, choice: null };
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
