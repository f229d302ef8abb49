import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.js';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freePort', () => {
  it('hands out distinct ports a listener can bind, under the range outgoing connections are given', async () => {
    const ephemeralLow = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768')).trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) expect(port).toBeLessThan(ephemeralLow);
    const servers = await Promise.all(ports.map(listen));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
});
