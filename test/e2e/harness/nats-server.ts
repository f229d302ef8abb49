import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

/** The NATS server binary: NATS_SERVER_BIN, else the Debian package's path, else PATH. */
const BINARY = process.env.NATS_SERVER_BIN ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server');

export interface NatsServer {
  url: string;
  /** Stops the server, keeping its JetStream store so `start()` brings the same streams back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes the store. */
  destroy(): Promise<void>;
}

/** A throwaway NATS server with JetStream on a free loopback port, so test runs share nothing. */
export async function startNatsServer(): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'agent-platform-nats-'));
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error('nats-server did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    stop,
    destroy: async () => {
      await stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
