import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

// Code cites the platform's decisions as `decisions §N` or `§N.M`, meaning a heading of
// docs/decisions.md. A citation whose section moved or never existed sends a reader to the wrong
// rule, so every one must land on a heading, and nothing may point outside the repository.

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DECISIONS = 'docs/decisions.md';

const SECTION = String.raw`§ *\d+(?:\.\d+)*`;
/** `decisions §3`, `decisions §3 and §4`, `decisions §3–§4`, `decisions §8, §10`, `decisions.md §2`. */
const CITATION = new RegExp(String.raw`decisions(?:\.md)? *(${SECTION}(?:(?:\s*(?:,|;|and|or|to|–|-))+\s*${SECTION})*)`, 'g');
const SECTION_NUMBER = /§ *(\d+(?:\.\d+)*)/g;
/** What the repository's hooks accept as a numbered heading: `## 7. Workflows`, `### 7.3 Validation`. */
const HEADING = /^#+ *(?:§ *)?(\d+(?:\.\d+)*)[.) ]/;

interface Line {
  /** `path:line`, as an editor opens it. */
  where: string;
  text: string;
}

interface Citation {
  where: string;
  section: string;
}

/** Lines matching an extended regex in tracked files, and in new ones not yet added (not ignored). */
async function grep(pattern: string): Promise<Line[]> {
  let stdout: string;
  try {
    ({ stdout } = await run('git', ['grep', '--untracked', '-n', '-I', '-E', '-e', pattern], { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 }));
  } catch (error) {
    if ((error as { code?: unknown }).code === 1) return []; // git grep's "no match"
    throw error;
  }
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const match = /^(.+?:\d+):(.*)$/.exec(line);
      if (!match) throw new Error(`unexpected git grep line: ${line}`);
      return { where: match[1]!, text: match[2]! };
    });
}

function sectionsIn(text: string): string[] {
  return [...text.matchAll(SECTION_NUMBER)].map((match) => match[1]!);
}

function citationsIn(line: Line): Citation[] {
  return [...line.text.matchAll(CITATION)].flatMap((match) => sectionsIn(match[1]!).map((section) => ({ where: line.where, section })));
}

let decisionLines: string[];
let headings: Set<string>;

beforeAll(async () => {
  decisionLines = (await readFile(join(REPO_ROOT, DECISIONS), 'utf8')).split('\n');
  headings = new Set(decisionLines.flatMap((text) => HEADING.exec(text)?.[1] ?? []));
});

describe(DECISIONS, () => {
  it('numbers its sections from 1 in order, the team\'s numbers, with sub-sections under their section', () => {
    const numbers = [...headings];
    const topLevel = numbers.filter((number) => !number.includes('.')).map(Number);
    expect(topLevel.slice(0, 11)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(topLevel).toEqual([...topLevel].sort((a, b) => a - b));
    const orphans = numbers.filter((number) => number.includes('.') && !headings.has(number.split('.')[0]!));
    expect(orphans, 'sub-sections without their section').toEqual([]);
  });

  it('refers only to its own sections', () => {
    const dangling = decisionLines.flatMap((text, index) =>
      HEADING.test(text) ? [] : sectionsIn(text).filter((section) => !headings.has(section)).map((section) => `${DECISIONS}:${index + 1} refers to §${section}`),
    );
    expect(dangling, 'references to sections this page does not have').toEqual([]);
  });
});

describe('citations of the decisions', () => {
  it('each name a heading of docs/decisions.md', async () => {
    const citations = (await grep('decisions(\\.md)? *§')).flatMap(citationsIn);
    expect(citations.length, 'git grep found no citation at all: is this a git checkout?').toBeGreaterThan(0);
    const unresolved = citations
      .filter(({ section }) => !headings.has(section))
      .map(({ where, section }) => `${where} cites decisions §${section}, which is no heading of ${DECISIONS}`);
    expect(unresolved, 'citations that lead nowhere').toEqual([]);
  });

  it('never point at the team\'s copy outside the repository', async () => {
    const outside = (await grep('spec/decisions\\.md')).map(({ where }) => `${where} points at the team's copy, outside the repository; cite ${DECISIONS}`);
    expect(outside).toEqual([]);
  });
});
