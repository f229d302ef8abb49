import type { ASTNode } from '@marcbachmann/cel-js';

/*
 * `string.matches` compiles its pattern with JavaScript's backtracking RegExp at every call. A
 * pattern read from the payload would let any webhook caller stall the runner, so patterns must
 * be literals, vetted at save time. What is refused is what V8's linear-time fallback engine
 * (enabled in expressions.ts) cannot run: backreferences, lookaround, and counted repetition
 * beyond 16 or nested inside another counted repetition. CEL specifies RE2 syntax, which has no
 * backreferences or lookaround either.
 */

export const MAX_PATTERN_LENGTH = 256; // characters; linear-time matching still scales with it
const MAX_REPEAT = 16; // V8's linear engine unrolls `{n,m}`; above this it stays backtracking

/** The first problem with a `matches` call in the expression, or undefined. */
export function checkRegexps(ast: ASTNode): string | undefined {
  let problem: string | undefined;
  const visit = (value: unknown): void => {
    if (problem !== undefined) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isAstNode(value)) return;
    if ((value.op === 'rcall' || value.op === 'call') && value.args[0] === 'matches') {
      const args = value.op === 'rcall' ? value.args[2] : value.args[1].slice(1);
      const pattern = args[0];
      if (pattern === undefined) return;
      if (pattern.op !== 'value' || typeof pattern.args !== 'string') {
        problem = `matches() takes a string literal pattern (at character ${value.range.start + 1})`;
        return;
      }
      const patternProblem = checkPattern(pattern.args);
      if (patternProblem) problem = `matches() pattern ${JSON.stringify(pattern.args)} ${patternProblem}`;
    }
    visit(value.args);
  };
  visit(ast);
  return problem;
}

function isAstNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value && 'range' in value;
}

/** Why the pattern is refused, or undefined. */
export function checkPattern(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern);
  } catch {
    return 'is not a valid regular expression';
  }
  // Per open group: whether a counted repetition occurs inside it.
  const groups: boolean[] = [];
  let inClass = false;
  let lastGroupCounted = false; // the group that just closed held a counted repetition
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    const afterGroup = lastGroupCounted;
    lastGroupCounted = false;
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) return 'must not use backreferences';
      i++;
    } else if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(') {
      if (/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) return 'must not use lookahead or lookbehind';
      groups.push(false);
    } else if (char === ')') {
      lastGroupCounted = groups.pop() ?? false;
      if (lastGroupCounted && groups.length > 0) groups[groups.length - 1] = true;
    } else if (char === '{') {
      const counted = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (!counted) continue; // a literal brace
      const bounds = [counted[1], counted[2]].filter((bound) => bound !== undefined && bound !== '').map(Number);
      if (bounds.some((bound) => bound > MAX_REPEAT)) return `must not repeat more than ${MAX_REPEAT} times in {n,m}`;
      if (afterGroup) return 'must not nest a counted repetition {n,m} inside another';
      if (groups.length > 0) groups[groups.length - 1] = true;
      i += counted[0].length - 1;
    }
  }
  return undefined;
}
