import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// decisions §18: a service started on its own (the mesh, Kubernetes) refuses to run on a built-in
// stand-in unless told: one line naming the variable, exit 1, before it connects to anything. The
// compiled mains, as the images run them (`pnpm test` builds them first).

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function start(packageDir: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, ['--conditions=compiled', join(REPO_ROOT, packageDir, 'dist/main.js')], { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}

// Unroutable on purpose: a process that got past its configuration would fail later, differently.
const common = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', NATS_URL: 'nats://127.0.0.1:1', LOG_LEVEL: 'silent' };

describe('a service outside the all-in-one mode', () => {
  it('agent-memory refuses the offline model and the hashing embedder, one line each, exit 1', { timeout: 30_000 }, async () => {
    const { code, stderr } = await start('services/agent-memory', { ...common, TOOL_SECRET_KEY: randomBytes(32).toString('base64') });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ {2}LLM_BASE_URL: is required outside the all-in-one mode: without it every tenant is answered by the built-in offline model; set ALLOW_OFFLINE_MODEL=true to run on it anyway$/m);
    expect(stderr).toMatch(/^ {2}EMBEDDING_BASE_URL: is required outside the all-in-one mode/m);
    expect(stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('identity refuses the immediate payment provider unless PAYMENT_PROVIDER=immediate, one line, exit 1', { timeout: 30_000 }, async () => {
    const { code, stderr } = await start('services/identity', { ...common, JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^ {2}PAYMENT_PROVIDER: is required outside the all-in-one mode: the only provider, immediate, grants purchased credits without charging anyone; set PAYMENT_PROVIDER=immediate to run with it$/m);
    expect(stderr).not.toMatch(/\bat .*\.js:\d+/);
  });
});
