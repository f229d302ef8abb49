import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, startLocalPlatformProcess, startProcess, waitForOutput, type LocalPlatformProcess, type RunningProcess } from '../e2e/harness/processes.js';

// The README's quickstart, run as a reader pastes it: every shell block of "Run it" that defines
// its helpers or talks to the API, in order, in one `bash -eo pipefail` (as it asks), against
// `pnpm start`'s entry point on a fresh data directory and `pnpm receiver`, offline. The only
// change is the addresses: this platform's and this receiver's ports instead of 8080 and 9090.

const run = promisify(execFile);
const RECEIVER_LISTENING = /Receiver at http:\/\/127\.0\.0\.1:(\d+)/;
let platform: LocalPlatformProcess;
let receiver: RunningProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'readme-'));
  receiver = startProcess('pnpm', ['receiver'], { RECEIVER_PORT: '0' });
  await waitForOutput('the receiver', receiver, (output) => RECEIVER_LISTENING.test(output), 30_000);
  platform = await startLocalPlatformProcess({ dataDir, nodeOptions: ['--import', 'tsx'] });
}, 180_000);

afterAll(async () => {
  await platform.stop();
  await receiver.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The fenced `sh` blocks of the README's "Run it" that define the helpers or call the API. */
async function quickstartBlocks(): Promise<string[]> {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = /^## Run it$([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!).filter((block) => block.includes('localhost:8080') || /^field\(\) \{/m.test(block));
}

it('runs the quickstart as written, offline', { timeout: 120_000 }, async () => {
  const blocks = await quickstartBlocks();
  expect(blocks[0]).toMatch(/^curl\(\) \{/m);
  expect(blocks.length).toBeGreaterThanOrEqual(4);
  const port = new URL(platform.baseUrl).port;
  const receiverPort = RECEIVER_LISTENING.exec(receiver.output())![1]!;
  const script = blocks.map((block) => block.replaceAll('localhost:8080', `127.0.0.1:${port}`).replaceAll('127.0.0.1:9090', `127.0.0.1:${receiverPort}`)).join('\n');
  const { stdout } = await run('bash', ['-eo', 'pipefail', '-c', script], { cwd: dataDir, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`the quickstart failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  // What each step answers, as the reader sees it.
  expect(stdout).toContain('"email":"ada@example.com"');
  expect(stdout).toContain('event: message.completed');
  expect(stdout).toMatch(/"status":"completed"/);
  // The eval began over the dataset's two items, and answers its results item by item.
  expect(stdout).toMatch(/"id":"eval_[0-9A-HJKMNP-TV-Z]{26}","dataset_id":"ds_[^"]+","agent_id":"agt_[^"]+","agent_version":\d+,"scorers":\[\{[^}]*"type":"contains"/);
  expect(stdout).toMatch(/"items":\[\{"item_id":"dsi_[^"]+","position":0,"input":\{"message":"Can I return shoes after 40 days\?"/);
  // Giving the agent its tool made its version 2, listed before its first.
  expect(stdout).toMatch(/"items":\[\{"version":2,[^\]]*\{"version":1,/);
  // The gated tool's call waited (the turn is kept in a variable), was rejected with the comment, and the turn went on.
  expect(stdout).toMatch(/"status":"rejected".*"comment":"Not without a receipt"/);
  expect(stdout).toMatch(new RegExp(`"url":"http://127\\.0\\.0\\.1:${receiverPort}/agent-platform".*"signing_secret":"whsec_`));
  // Its test delivery reached the receiver, which answered it.
  expect(stdout).toMatch(/"success":true.*"response_status":200/);
  expect(receiver.output()).toMatch(/^POST \/agent-platform \(webhook evt_\w+\) \{.*"type":"agent.created"/m);
  // Each end user's fact was extracted for them alone, updated by the later turn, then forgotten.
  expect(stdout).toMatch(/"history":\[\{"event":"ADD","old_content":null,"new_content":"I moved to Lisbon\.","source":"extraction".*\{"event":"UPDATE","old_content":"I moved to Lisbon\.","new_content":"I moved to Lisbon"/);
  expect(stdout).toContain('{"deleted":1}');
  // Ben's question found his own fact, said in another form of its word, and not Ana's.
  // (curl adds no line break: each chat reply begins with its message id.)
  const benAsked = stdout.split('{"id":"msg_').find((reply) => reply.includes('Where did I move?')) ?? '';
  expect(benAsked).toContain('I moved to Porto.');
  expect(benAsked).not.toContain('Lisbon');
  // The refund waited for its approval, which was given, and the agent was told.
  expect(stdout).toMatch(/"node_id":"check","status":"waiting".*"message":"Refund 40 EUR to Ana\?"/);
  expect(stdout).toMatch(/"node_id":"check","status":"completed"[^}]*"output":\{[^}]*"approved":true/);
  expect(stdout).toMatch(/"node_id":"tell","status":"completed".*receipt checked/);
});

it('stops at the first failed step, showing its error rather than a stack trace', async () => {
  const [helpers] = await quickstartBlocks();
  const port = new URL(platform.baseUrl).port;
  const script = [
    helpers,
    `ACCESS_TOKEN=$(curl -s 127.0.0.1:${port}/api/v1/auth/login -d 'username=nobody@example.com&password=wrong' | field access_token)`,
    'echo "went on with $ACCESS_TOKEN"',
  ].join('\n');
  const failed = await run('bash', ['-eo', 'pipefail', '-c', script], { cwd: dataDir }).then(
    () => undefined,
    (error: { code?: number; stdout?: string; stderr?: string }) => error,
  );
  expect(failed?.code).not.toBe(0);
  expect(failed?.stdout).not.toContain('went on');
  expect(failed?.stderr).toContain('"error":"unauthorized"');
  expect(failed?.stderr).not.toMatch(/node:internal|\n\s+at /);
});
