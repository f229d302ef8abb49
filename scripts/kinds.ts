import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { TOOL_KINDS, TOOL_TYPES } from '../services/agent-memory/src/tools/kinds/tool-kinds.js';
import { NODE_KINDS, NODE_TYPES } from '../services/workflow-runner/src/nodes/node-kinds.js';

/**
 * `pnpm kinds` writes what the rest of the repository knows of the workflow node types and the
 * tool types from their modules (services/workflow-runner/src/nodes, services/agent-memory/src/
 * tools/kinds): the gateway's catalogue (its schemas, and through them the OpenAPI document and
 * the client), the console's tool form, and the README's tables.
 * `pnpm kinds:check` (`--check`) fails when a written file differs from what the modules say.
 */
const root = new URL('../', import.meta.url);
const GENERATED_BY = '// Written by `pnpm kinds` from the kinds\' own modules; edit those, then run it again.';

interface Output {
  file: string;
  text: (committed: string) => string;
}

const nodeKinds = NODE_TYPES.map((type) => ({ type, summary: NODE_KINDS[type].summary, config: NODE_KINDS[type].configHelp, trigger: NODE_KINDS[type].trigger }));

const toolKinds = TOOL_TYPES.map((type) => ({ type, label: TOOL_KINDS[type].label, summary: TOOL_KINDS[type].summary, config: TOOL_KINDS[type].configHelp, schemas: TOOL_KINDS[type].schemas }));

const gatewayCatalogue = [
  GENERATED_BY,
  '',
  '/** Workflow node types (services/workflow-runner/src/nodes), in the order people read them. */',
  `export const WORKFLOW_NODE_TYPES = ${JSON.stringify(NODE_TYPES)} as const;`,
  '',
  `export const WORKFLOW_NODE_KINDS = ${JSON.stringify(nodeKinds, null, 2)} as const;`,
  '',
  '/** Tool types (services/agent-memory/src/tools/kinds). schemas: own (input_schema) or discovered (from its server). */',
  `export const TOOL_TYPES = ${JSON.stringify(TOOL_TYPES)} as const;`,
  '',
  `export const TOOL_KINDS = ${JSON.stringify(toolKinds, null, 2)} as const;`,
  '',
].join('\n');

const consoleToolForm = [
  GENERATED_BY,
  '',
  '/** Each tool type\'s form (services/agent-memory/src/tools/kinds): its name, its config\'s controls, whose schema the arguments follow. */',
  `export const TOOL_FORMS = ${JSON.stringify(Object.fromEntries(TOOL_TYPES.map((type) => [type, { label: TOOL_KINDS[type].label, fields: TOOL_KINDS[type].fields, schemas: TOOL_KINDS[type].schemas }])), null, 2)} as const;`,
  '',
].join('\n');

function toolTable(): string {
  return ['| tool type | a call |', '|---|---|', ...toolKinds.map((kind) => `| \`${kind.type}\` (${kind.label}) | ${kind.summary} |`)].join('\n');
}

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
  { file: 'console/src/generated/tool-forms.ts', text: () => consoleToolForm },
  { file: 'README.md', text: (committed) => between(between(committed, 'node-types', nodeTable()), 'tool-types', toolTable()) },
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
