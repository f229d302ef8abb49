import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, formatOpenApiDocument } from './document.js';

/**
 * `pnpm openapi` writes the repository's openapi.json from the gateway's routes (no server, no
 * database); `pnpm openapi:check` (`--check`) fails when the committed file differs from them.
 */
const OPENAPI_FILE = fileURLToPath(new URL('../../../openapi.json', import.meta.url));
const CONTEXT_LINES = 3;

/** The first lines where `committed` and `generated` part, for the failure message. */
function firstDifference(committed: string, generated: string): string {
  const before = committed.split('\n');
  const after = generated.split('\n');
  const index = before.findIndex((line, at) => line !== after[at]);
  const at = index === -1 ? before.length : index;
  const show = (lines: string[], sign: string) => lines.slice(at, at + CONTEXT_LINES).map((line) => `${sign} ${line}`);
  return [`first difference at line ${at + 1}:`, ...show(before, '-'), ...show(after, '+')].join('\n');
}

const text = formatOpenApiDocument(await buildOpenApiDocument());
if (process.argv.includes('--check')) {
  const committed = await readFile(OPENAPI_FILE, 'utf8').catch(() => '');
  if (committed !== text) {
    console.error(`openapi: openapi.json is out of date; run 'pnpm openapi' and commit openapi.json\n${firstDifference(committed, text)}`);
    process.exit(1);
  }
  console.log('openapi: openapi.json is up to date');
} else {
  await writeFile(OPENAPI_FILE, text);
  console.log(`openapi: wrote ${OPENAPI_FILE}`);
}
