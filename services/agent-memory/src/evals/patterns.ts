import { characters } from '@agent-platform/kit';
import { RE2JS } from 're2js';

/**
 * Patterns written by a tenant and run on a model's output, by an eval's `regex` scorer and by the
 * `pattern` keywords of a `json_schema` scorer's schema. JavaScript's RegExp backtracks, so a
 * pattern such as `(a+)+$` can hold the event loop for hours on a short output; RE2 (re2js, in
 * pure JS) matches in time linear in the output, and refuses the constructs that need
 * backtracking (look-around, back-references).
 *
 * Linear is still a factor of the pattern's size: RE2 steps through every instruction of the
 * compiled program for each character in the worst case. So the program is bounded, and so is the
 * product of the two: some 50 to 70 ms of matching at worst (measured: 1,000 instructions over
 * 50,000 characters that keep every instruction busy).
 */

/** Instructions a compiled pattern may have (`[a-z]{990}` has 992). */
export const PATTERN_PROGRAM_MAX = 1_000;
/** Instructions × characters one match may step through. */
export const MATCH_BUDGET = 50_000_000;

/** A pattern compiled for linear-time matching, or why it cannot be used. */
export function compilePattern(source: string): RE2JS | string {
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source);
  } catch (error) {
    // re2js words its syntax errors as Go's regexp does: "error parsing regexp: missing closing ): `(abc`".
    return `is not a valid pattern (RE2 syntax: no look-around or back-references): ${error instanceof Error ? error.message : String(error)}`;
  }
  const size = pattern.programSize();
  if (size > PATTERN_PROGRAM_MAX) return `is too large a pattern: it compiles to ${characters(size)} instructions, at most ${characters(PATTERN_PROGRAM_MAX)}`;
  return pattern;
}

/**
 * Why `text` is too long to match with patterns of `programSize` instructions in all (`what`
 * names them), or undefined when it is not.
 */
export function beyondBudget(programSize: number, text: string, what: string): string | undefined {
  if (programSize * text.length <= MATCH_BUDGET) return undefined;
  const longest = Math.floor(MATCH_BUDGET / programSize);
  return `The output is too long to match against ${what}: ${characters(text.length)} characters, at most ${characters(longest)} for ${characters(programSize)} instructions of pattern.`;
}
