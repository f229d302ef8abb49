import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@agent-platform/kit/testing';

export interface HaproxyFront {
  url: string;
  /** What it printed: each server taken out of and back into the rotation, with the reason. */
  output(): string;
  close(): Promise<void>;
}

/**
 * HAProxy (Debian's package) in front of gateway replicas, as an ingress runs: round robin, each
 * server health-checked on `/readyz` every 250 ms and taken out after two failures (within about
 * a second: the gateways' SHUTDOWN_DELAY_MS must be longer), connection failures retried on
 * another server (safe for any method: nothing was sent).
 */
export async function startHaproxy(backends: readonly number[]): Promise<HaproxyFront> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'haproxy-'));
  const config = [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 60s',
    '  timeout server 60s',
    // A loaded 2-core machine answers /readyz (four backends and Redis) in tens of ms, sometimes more.
    '  timeout check 2s',
    '  retries 3',
    '  option redispatch',
    '  retry-on conn-failure',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    '  default-server inter 250ms fall 2 rise 2',
    ...backends.map((backend, index) => `  server gateway-${index + 1} 127.0.0.1:${backend} check`),
    '',
  ].join('\n');
  const file = join(dir, 'haproxy.cfg');
  await writeFile(file, config);
  const child = spawn('haproxy', ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  // Ready once it answers through a gateway it has checked (a probe: HAProxy announces nothing).
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { url, output: () => output, close };
    if (Date.now() > deadline) {
      await close();
      throw new Error(`haproxy did not serve within 30 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
