import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';

// The README's quickstart, run as a reader pastes it: every shell block of "Run it" that talks to
// the API, in order, in one bash session, against `pnpm start`'s entry point on a fresh data
// directory. The only change is the address: this platform's port instead of 8080.

const run = promisify(execFile);
let platform: LocalPlatformProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'readme-'));
  // The quickstart's webhook points at example.com, which has no DNS here: the process resolves it
  // as the internet would (test/support/example-dns.ts).
  const exampleDns = pathToFileURL(join(REPO_ROOT, 'test/support/example-dns.ts')).href;
  platform = await startLocalPlatformProcess({ dataDir, nodeOptions: ['--import', 'tsx', '--import', exampleDns] });
}, 180_000);

afterAll(async () => {
  await platform.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The fenced `sh` blocks of one section of the README that call the API. */
async function quickstartBlocks(): Promise<string[]> {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /^## Run it$([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!).filter((block) => block.includes('localhost:8080'));
}

it('runs the quickstart as written', { timeout: 120_000 }, async () => {
  const blocks = await quickstartBlocks();
  expect(blocks.length).toBeGreaterThanOrEqual(3);
  const port = new URL(platform.baseUrl).port;
  const script = [
    'set -euo pipefail',
    // A failed call stops the run with its answer (curl alone exits 0 on a 4xx or 5xx).
    'curl() { command curl --fail-with-body "$@"; }',
    ...blocks.map((block) => block.replaceAll('localhost:8080', `127.0.0.1:${port}`)),
  ].join('\n');
  const { stdout } = await run('bash', ['-c', script], { cwd: dataDir, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`the quickstart failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  // What each step answers, as the reader sees it.
  expect(stdout).toContain('"email":"ada@example.com"');
  expect(stdout).toContain('event: message.completed');
  expect(stdout).toMatch(/"status":"completed"/);
  // The gated tool's call waited (the turn is kept in a variable), was rejected with the comment, and the turn went on.
  expect(stdout).toMatch(/"status":"rejected".*"comment":"Not without a receipt"/);
  expect(stdout).toMatch(/"url":"https:\/\/example\.com\/agent-platform".*"signing_secret":"whsec_/);
  // Each end user's fact was extracted for them alone, updated by the later turn, then forgotten.
  expect(stdout).toMatch(/"history":\[\{"event":"ADD","old_content":null,"new_content":"I moved to Lisbon\.","source":"extraction".*\{"event":"UPDATE","old_content":"I moved to Lisbon\.","new_content":"I moved to Lisbon"/);
  expect(stdout).toContain('{"deleted":1}');
  // The refund waited for its approval, which was given, and the agent was told.
  expect(stdout).toMatch(/"node_id":"check","status":"waiting".*"message":"Refund 40 EUR to Ana\?"/);
  expect(stdout).toMatch(/"node_id":"check","status":"completed"[^}]*"output":\{[^}]*"approved":true/);
  expect(stdout).toMatch(/"node_id":"tell","status":"completed".*receipt checked/);
});
