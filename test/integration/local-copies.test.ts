/**
 * `pnpm start` twice on one machine, and the mistakes a new user makes: a second copy with its own
 * PORT and DATA_DIR (everything else default) runs beside the first, metrics included; a copy that
 * cannot start says why and what to do in one line, with no stack trace, and exits non-zero.
 */
import { createServer, type Server } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory, type Defer } from './support/cleanups.js';
import { freePort, httpOk, LOCAL_ENTRY, startProcess, PLATFORM_UP, waitForOutput, type RunningProcess } from '../e2e/harness/processes.js';

const defer = deferredCleanups();

/** `pnpm start`'s entry point with only these variables set: every other one at its default. */
function startCopy(env: Record<string, string>): RunningProcess {
  const running = startProcess(process.execPath, LOCAL_ENTRY, env);
  defer(() => running.stop());
  return running;
}

async function startServing(env: { DATA_DIR: string; PORT: string }): Promise<RunningProcess & { url: string }> {
  const running = startCopy({ ...env, LOG_LEVEL: 'warn' });
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitForOutput(`the copy on ${env.PORT}`, running, PLATFORM_UP);
  return { ...running, url };
}

/** Resolves with the exit code once the process has exited and everything it printed is read. */
function exitOf({ child }: RunningProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null && child.stdout?.readableEnded && child.stderr?.readableEnded) resolve(child.exitCode);
    else child.once('close', (code: number | null) => resolve(code));
  });
}

/** What a failed start printed, as lines: exactly one is expected, and never a stack frame. */
function linesOf(running: RunningProcess): string[] {
  const lines = running.output().trim().split('\n');
  expect(running.output(), 'a stack trace').not.toMatch(/^\s+at /m);
  return lines;
}

async function holdPort(defer: Defer): Promise<number> {
  const port = await freePort();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => server.close(resolve)));
  return port;
}

describe('two copies on one machine', () => {
  it('run side by side with only PORT and DATA_DIR differing, each serving /healthz and its own /metrics, requests by route', { timeout: 240_000 }, async () => {
    const [first, second] = await Promise.all([temporaryDirectory('agent-platform-copy-a-', defer), temporaryDirectory('agent-platform-copy-b-', defer)]);
    // One after the other, as a user starts them: the second finds every default port of the first taken.
    const a = await startServing({ DATA_DIR: first, PORT: String(await freePort()) });
    const b = await startServing({ DATA_DIR: second, PORT: String(await freePort()) });

    for (const copy of [a, b]) {
      expect((await fetch(`${copy.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${copy.url}/api/v1/agents/agent_unknown`)).status).toBe(401);
      const metrics = await fetch(`${copy.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
      // Served by the copy itself: its own process, in the all-in-one mode's service name.
      const text = await metrics.text();
      expect(text).toMatch(new RegExp(`^target_info\\{[^}]*service_name="local"[^}]*process_pid="${copy.child.pid}"`, 'm'));
      // The route, not the path: the label stays one series per route whatever the ids.
      expect(text).toMatch(/^http_server_request_duration_count\{[^}]*http_route="\/api\/v1\/agents\/:agent_id"[^}]*\} 1$/m);
      // One series per pool and state, none negative, for each service's database (the pg
      // instrumentation's own counters, one count for all pools, went below zero here).
      const connections = text.match(/^db_client_connection_count\{.*$/gm) ?? [];
      const series = connections.map((line) => `${/state="(\w+)"/.exec(line)?.[1]} ${/pool_name="[^"]*\/(\w+)"/.exec(line)?.[1]}`);
      expect(series.toSorted()).toEqual(['agents', 'identity', 'webhooks', 'workflows'].flatMap((name) => [`idle agent_platform_${name}`, `used agent_platform_${name}`]).toSorted());
      for (const line of connections) expect(Number(line.split(' ').at(-1)), line).toBeGreaterThanOrEqual(0);
      // The runtime's own: a start collects garbage, and the event loop's delay is measured.
      expect(Number(/^v8js_gc_duration_count\{v8js_gc_type="minor"[^}]*\} (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      expect(text).toMatch(/^nodejs_eventloop_delay_p99\{[^}]*\} [\d.e-]+$/m);
    }

    expect(await b.stop(60_000)).toBe(0);
    expect(await a.stop(60_000)).toBe(0);
  });

  it('refuses a DATA_DIR a running copy holds, in one line naming it, and leaves that copy running', { timeout: 240_000 }, async () => {
    const dataDir = await temporaryDirectory('agent-platform-held-', defer);
    const running = await startServing({ DATA_DIR: dataDir, PORT: String(await freePort()) });

    const second = startCopy({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(await exitOf(second)).toBe(1);
    expect(linesOf(second)).toEqual([
      `Cannot start: DATA_DIR ${dataDir} is in use by another agent platform (pid ${running.child.pid}): stop it or choose another DATA_DIR`,
    ]);
    // The refused copy stopped nothing of the running one's (its PostgreSQL included).
    expect(await httpOk(`${running.url}/readyz`)).toBe(true);
    expect(await running.stop(60_000)).toBe(0);
  });
});

describe('a start that cannot succeed', () => {
  it('names a taken PORT and the fix in one line, with no stack trace, and exits 1', async () => {
    const dataDir = await temporaryDirectory('agent-platform-port-', defer);
    const port = await holdPort(defer);
    const copy = startCopy({ DATA_DIR: dataDir, PORT: String(port) });
    expect(await exitOf(copy)).toBe(1);
    const lines = linesOf(copy);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^Cannot start: port ${port} is in use \\(PORT\\): stop the other process or set PORT=\\d+$`));
  });

  it('names any other taken port by its variable, e.g. EMBEDDED_PG_PORT', async () => {
    const dataDir = await temporaryDirectory('agent-platform-pg-port-', defer);
    const port = await holdPort(defer);
    const copy = startCopy({ DATA_DIR: dataDir, PORT: String(await freePort()), EMBEDDED_PG_PORT: String(port) });
    expect(await exitOf(copy)).toBe(1);
    expect(linesOf(copy)).toEqual([expect.stringMatching(new RegExp(`^Cannot start: port ${port} is in use \\(EMBEDDED_PG_PORT\\): .* set EMBEDDED_PG_PORT=`))]);
  });

  it('lists each bad variable on a line of its own, with no stack trace, and exits 1', async () => {
    const copy = startCopy({ PORT: 'eighty', METRICS_PORT: 'nine' });
    expect(await exitOf(copy)).toBe(1);
    const lines = linesOf(copy);
    expect(lines[0]).toBe('Invalid configuration:');
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}PORT: /));
    expect(lines).toContainEqual('  METRICS_PORT: must be a port number or "off"');
  });

  it('says an unforeseen failure in one line, pointing to LOG_LEVEL=debug for the stack', async () => {
    const directory = await temporaryDirectory('agent-platform-not-a-dir-', defer);
    const file = join(directory, 'data');
    await writeFile(file, 'not a directory');
    const copy = startCopy({ DATA_DIR: file, PORT: String(await freePort()) });
    expect(await exitOf(copy)).toBe(1);
    expect(linesOf(copy)).toEqual([expect.stringMatching(/^Cannot start: .*\(set LOG_LEVEL=debug for the details\)$/)]);

    const debug = startCopy({ DATA_DIR: file, PORT: String(await freePort()), LOG_LEVEL: 'debug' });
    expect(await exitOf(debug)).toBe(1);
    expect(debug.output()).toMatch(/"msg":"start-up failed"/);
    expect(debug.output()).toContain('\\n    at ');
  });
});
