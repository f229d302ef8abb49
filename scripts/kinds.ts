import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { NODE_KINDS, NODE_TYPES } from '../services/workflow-runner/src/nodes/node-kinds.js';

/**
 * `pnpm kinds` writes what the rest of the repository knows of the workflow node types from their
 * modules (services/workflow-runner/src/nodes): the gateway's catalogue (its schemas, and through
 * them the OpenAPI document and the client the console uses) and the README's table.
 * `pnpm kinds:check` (`--check`) fails when a written file differs from what the modules say.
 */
const root = new URL('../', import.meta.url);
const GENERATED_BY = '// Written by `pnpm kinds` from the kinds\' own modules; edit those, then run it again.';

interface Output {
  file: string;
  text: (committed: string) => string;
}

const nodeKinds = NODE_TYPES.map((type) => ({ type, summary: NODE_KINDS[type].summary, config: NODE_KINDS[type].configHelp, trigger: NODE_KINDS[type].trigger }));

const gatewayCatalogue = [
  GENERATED_BY,
  '',
  '/** Workflow node types (services/workflow-runner/src/nodes), in the order people read them. */',
  `export const WORKFLOW_NODE_TYPES = ${JSON.stringify(NODE_TYPES)} as const;`,
  '',
  `export const WORKFLOW_NODE_KINDS = ${JSON.stringify(nodeKinds, null, 2)} as const;`,
  '',
].join('\n');

/** README's table of node types: what each does. Triggers share a row, as they are read together. */
function nodeTable(): string {
  const triggers = nodeKinds.filter((kind) => kind.trigger);
  const rows = [
    `| ${triggers.map((kind) => `\`${kind.type}\``).join(', ')} | triggers: ${triggers.map((kind) => kind.summary.replace(/^trigger: /, '')).join(', or ')} |`,
    ...nodeKinds.filter((kind) => !kind.trigger).map((kind) => `| \`${kind.type}\` | ${kind.summary} |`),
  ];
  return ['| node | does |', '|---|---|', ...rows].join('\n');
}

/** `committed` with the part between the named markers replaced by `body`. */
function between(committed: string, name: string, body: string): string {
  const start = `<!-- ${name}: written by pnpm kinds -->`;
  const end = `<!-- /${name} -->`;
  const from = committed.indexOf(start);
  const to = committed.indexOf(end);
  if (from === -1 || to < from) throw new Error(`README.md lacks the markers ${start} … ${end}`);
  return `${committed.slice(0, from + start.length)}\n${body}\n${committed.slice(to)}`;
}

const outputs: Output[] = [
  { file: 'gateway/src/generated/kinds.ts', text: () => gatewayCatalogue },
  { file: 'README.md', text: (committed) => between(committed, 'node-types', nodeTable()) },
];

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const output of outputs) {
  const path = fileURLToPath(new URL(output.file, root));
  const committed = await readFile(path, 'utf8').catch(() => '');
  const text = output.text(committed);
  if (text === committed) continue;
  if (check) stale.push(output.file);
  else await writeFile(path, text);
}
if (check && stale.length > 0) {
  console.error(`kinds: out of date: ${stale.join(', ')}; run 'pnpm kinds' and commit them`);
  process.exit(1);
}
console.log(check ? 'kinds: generated files are up to date' : 'kinds: written');
