import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../free-port.js';

/** A nats-server child process with JetStream, for tests that stop and restart NATS. */
export interface TestNatsServer {
  /** `nats://127.0.0.1:<port>`; the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL); its JetStream store stays for the next start. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and deletes its store. */
  dispose(): Promise<void>;
}

// ms: how long a server gets to accept connections, and to exit before it is killed.
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

// Debian's package installs it outside a non-root PATH.
const DEFAULT_BINARY = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';

/**
 * Starts a throwaway nats-server (`NATS_SERVER_BIN`, else Debian's `/usr/sbin/nats-server`, else
 * `nats-server` on PATH) on a free loopback port with its store in a temporary directory.
 */
export async function startTestNatsServer(binary = process.env.NATS_SERVER_BIN ?? DEFAULT_BINARY): Promise<TestNatsServer> {
  const storeDir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child) return;
    const spawned = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = spawned;
    let failure: Error | undefined;
    spawned.once('error', (error) => (failure = error));
    spawned.once('exit', () => {
      if (child === spawned) child = undefined;
    });
    await waitForPort(port, spawned, () => failure);
  };
  const stop = async () => {
    const running = child;
    if (!running) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    start,
    stop,
    async dispose() {
      await stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}

/** Resolves on the line nats-server logs once it accepts clients; rejects if it fails or exits first. */
function waitForPort(port: number, child: ChildProcess, failure: () => Error | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stderr?.removeListener('data', onData);
      child.removeListener('exit', onExit);
      child.removeListener('error', onError);
      // Keep draining its log, or a full pipe would stall the server.
      child.stderr?.resume();
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Server is ready')) finish();
    };
    const onExit = (code: number | null) => finish(new Error(`nats-server exited with code ${code}: ${failure()?.message ?? log}`));
    const onError = (error: Error) => finish(new Error(`nats-server could not start: ${error.message}`));
    const timer = setTimeout(() => finish(new Error(`nats-server did not listen on ${port} within ${START_TIMEOUT_MS} ms:\n${log}`)), START_TIMEOUT_MS);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
    const early = failure();
    if (early) onError(early);
  });
}

/** Deletes a test's own JetStream stream (a test that shares a server cleans up after itself). */
export async function deleteNatsStream(url: string, stream: string): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    await (await jetstreamManager(nc)).streams.delete(stream);
  } finally {
    await nc.close();
  }
}
