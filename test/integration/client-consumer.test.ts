/**
 * The client's acceptance criterion: a TypeScript program written against @agent-platform/client
 * outside this repository (test/client-consumer/program.ts) type-checks under `strict` and passes
 * against the platform. The package reaches the program as a user gets it: built, `pnpm pack`ed,
 * and installed from the tarball with pnpm into a scratch directory (its dependencies from the
 * local store, so no network is needed when the repository is installed). The repository's
 * TypeScript checks the program there with the package's declarations included (skipLibCheck off);
 * Node runs the .ts itself (type stripping) against `pnpm start`'s entry point.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';

const run = promisify(execFile);
const CONSUMER = join(REPO_ROOT, 'test/client-consumer');
const TSC = createRequire(join(REPO_ROOT, 'package.json')).resolve('typescript/bin/tsc');

/** What the program prints, one line a step, when everything it checks holds. */
const STEPS = [
  'register',
  'a duplicate registration is a typed 409 conflict',
  'login',
  'me',
  'API keys: created, listed by prefix, used; a key cannot manage keys; revoked',
  'webhooks: a bad URL is a typed 422 naming url; subscribed with a signing secret',
  'agents: created and listed page by page',
  'verifyWebhook: every agent.created delivery verified, a tampered copy refused',
  'memory: added and searched',
  'chat and streamChat in one session',
  'a workflow with a condition executed synchronously, each branch once',
  'its executions listed, a page at a time',
  'a typed 404, from a call and from streamChat',
];

let scratch: string;
let dataDir: string;
let platform: LocalPlatformProcess | undefined;

beforeAll(async () => {
  [scratch, dataDir] = await Promise.all([mkdtemp(join(tmpdir(), 'client-consumer-')), mkdtemp(join(tmpdir(), 'client-consumer-data-'))]);
  // The program receives its webhook deliveries on loopback, which only this allowance lets a webhook target.
  const env = { ALLOW_PRIVATE_NETWORK_URLS: 'true', LOG_LEVEL: 'warn' };
  const [installed, started] = await Promise.allSettled([installPackedClient(scratch), startLocalPlatformProcess({ dataDir, env })]);
  if (started.status === 'fulfilled') platform = started.value;
  if (installed.status === 'rejected') throw installed.reason;
  if (started.status === 'rejected') throw started.reason;
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await Promise.all([scratch, dataDir].filter(Boolean).map((path) => rm(path, { recursive: true, force: true })));
});

/** Builds the client, packs it as `pnpm publish` would, and installs the tarball in `directory` beside the program. */
async function installPackedClient(directory: string): Promise<void> {
  await run(process.execPath, [TSC, '-b', 'packages/client/tsconfig.build.json'], { cwd: REPO_ROOT });
  await run('pnpm', ['pack', '--pack-destination', directory], { cwd: join(REPO_ROOT, 'packages/client') });
  const tarball = (await readdir(directory)).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack left no tarball in ${directory}`);
  // The program imports node:http, so its author installs Node's types; the repository's version is in the store.
  const typesNode = JSON.parse(await readFile(createRequire(join(REPO_ROOT, 'package.json')).resolve('@types/node/package.json'), 'utf8')) as { version: string };
  const manifest = {
    name: 'client-consumer',
    private: true,
    type: 'module',
    dependencies: { '@agent-platform/client': `file:./${tarball}` },
    devDependencies: { '@types/node': typesNode.version },
  };
  await writeFile(join(directory, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // A fresh project has no lockfile, which CI=true would otherwise demand.
  await run('pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile'], { cwd: directory }).catch(failed('pnpm install'));
  await copyFile(join(CONSUMER, 'program.ts'), join(directory, 'program.ts'));
  await copyFile(join(CONSUMER, 'tsconfig.consumer.json'), join(directory, 'tsconfig.json'));
}

function failed(what: string): (error: ExecFileException & { stdout?: string; stderr?: string }) => never {
  return (error) => {
    throw new Error(`${what} failed (${error.code ?? error.signal ?? 'no exit code'}):\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  };
}

describe('a program written against the packed @agent-platform/client', () => {
  it('type-checks under strict with the repository’s TypeScript, the package’s declarations included', { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, [TSC, '-p', 'tsconfig.json', '--listFiles'], { cwd: scratch }).catch((error: ExecFileException & { stdout?: string }) => {
      // The diagnostics, without the files listed (absolute paths) that follow them.
      const diagnostics = (error.stdout ?? '').split('\n').filter((line) => !line.startsWith('/'));
      throw new Error(`tsc -p tsconfig.json failed:\n${diagnostics.join('\n')}`);
    });
    const files = stdout.trim().split('\n');
    // Resolved from the installed package, not from this repository's sources.
    const clientDeclarations = files.filter((file) => /\/node_modules\/@agent-platform\/client\/dist\/.+\.d\.ts$/.test(file));
    expect(clientDeclarations.length, files.join('\n')).toBeGreaterThan(0);
    expect(clientDeclarations.every((file) => file.startsWith(scratch))).toBe(true);
    expect(files.some((file) => file.startsWith(scratch) && file.includes('/node_modules/openapi-fetch/'))).toBe(true);
  });

  it('type-checks the README’s TypeScript example the same way', { timeout: 60_000 }, async () => {
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    const example = /^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
    expect(example, 'a ```ts block in README.md').toBeDefined();
    await writeFile(join(scratch, 'readme-example.ts'), example!);
    await writeFile(join(scratch, 'tsconfig.readme.json'), JSON.stringify({ extends: './tsconfig.json', files: ['readme-example.ts'] }));
    await run(process.execPath, [TSC, '-p', 'tsconfig.readme.json'], { cwd: scratch }).catch(failed('tsc on the README example'));
  });

  it('passes every step against the platform', { timeout: 90_000 }, async () => {
    const { stdout, stderr } = await run(process.execPath, ['program.ts', platform!.baseUrl], {
      cwd: scratch,
      // Only what a shell would give it: none of the test runner's loaders or options.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      timeout: 80_000,
    }).catch((error: ExecFileException & { stdout?: string; stderr?: string }) => {
      throw new Error(`the program failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}\nplatform:\n${platform!.output().slice(-4000)}`);
    });
    const passed = [...stdout.matchAll(/^ok \d+ - (.+)$/gm)].map((match) => match[1]);
    expect(passed, `${stdout}\n${stderr}`).toEqual(STEPS);
    expect(stdout).toContain(`passed all ${STEPS.length} steps`);
  });
});
