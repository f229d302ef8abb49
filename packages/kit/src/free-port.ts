import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Linux's default for `ip_local_port_range`'s low end, and under the range macOS and Windows use. */
const EPHEMERAL_LOW_DEFAULT = 32_768;
/** Under this, ports are well known or registered to common servers. */
const LOWEST = 10_000;
const ATTEMPTS = 100;

/** Ports handed out by this process: two callers must not both be given one no listener holds yet. */
const handedOut = new Set<number>();

/**
 * A port free on `host` now, for a listener that binds it later (another process, say). Taken from
 * under the range the system gives outgoing connections their local ports from: a port the system
 * picks (`listen(0)`) comes from that range, and any connection opened meanwhile (a database
 * pool's, a load generator's) could take it before the listener binds, which CI met as
 * EADDRINUSE. Under it, only another listener can, and one that holds it now is skipped.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const below = await ephemeralLow();
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (handedOut.has(port)) continue;
    // Claimed before the probe: callers at once would otherwise probe the same port and both take it.
    handedOut.add(port);
    if (await listensOn(host, port)) return port;
    handedOut.delete(port);
  }
  throw new Error(`no free port under ${below} on ${host} after ${ATTEMPTS} tries`);
}

/** Whether a listener could bind `host:port` now (one is opened and closed again). */
function listensOn(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host, port }, () => probe.close(() => resolve(true)));
  });
}

let ephemeral: Promise<number> | undefined;

function ephemeralLow(): Promise<number> {
  ephemeral ??= readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').then(
    (text) => {
      const low = Number(text.trim().split(/\s+/)[0]);
      return Number.isInteger(low) && low > LOWEST + 1_000 ? low : EPHEMERAL_LOW_DEFAULT;
    },
    () => EPHEMERAL_LOW_DEFAULT,
  );
  return ephemeral;
}
