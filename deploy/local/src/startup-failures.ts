import type { LocalConfig } from './config.js';
import { DataDirInUseError } from './data-dir-lock.js';
import { fixedPorts, PortInUseError } from './ports.js';

type Explain = (error: Error & { code?: unknown; port?: unknown; syscall?: unknown }, config: LocalConfig) => string | undefined;

/**
 * The start-up failures a user can fix, each as one line naming the cause and the fix. A row
 * answers undefined when the error is not its kind; the first row to answer wins, so it is tried
 * on the error and then on each of its causes before the next row.
 */
const KNOWN_FAILURES: readonly { cause: string; explain: Explain }[] = [
  {
    cause: 'a port the platform listens on is taken',
    explain: (error, config) => {
      if (error instanceof PortInUseError) return portInUse(error.port, error.variable, error.suggestion);
      if (error.code !== 'EADDRINUSE' && !error.message.includes('EADDRINUSE')) return undefined;
      // Taken between the check and the listener: named by the port the configuration gives it.
      const port = typeof error.port === 'number' ? error.port : Number(/EADDRINUSE\b.*:(\d+)/.exec(error.message)?.[1]);
      return portInUse(port, fixedPorts(config).find((fixed) => fixed.port === port)?.variable);
    },
  },
  {
    cause: 'a port below 1024 without the privilege',
    explain: (error, config) => {
      if (error.code !== 'EACCES' || error.syscall !== 'listen' || typeof error.port !== 'number') return undefined;
      const variable = fixedPorts(config).find((fixed) => fixed.port === error.port)?.variable ?? 'the port';
      return `port ${error.port} needs privileges (${variable}): set ${variable} to a port above 1023`;
    },
  },
  {
    cause: "another copy's data directory",
    explain: (error) =>
      error instanceof DataDirInUseError
        ? `DATA_DIR ${error.dataDir} is in use by another agent platform (pid ${error.pid}): stop it or choose another DATA_DIR`
        : undefined,
  },
  {
    cause: 'DATABASE_URL names a server that is not running',
    explain: (error, { launcher }) => {
      const server = addressOf(launcher.DATABASE_URL, 5432);
      if (!server || error.code !== 'ECONNREFUSED' || error.port !== server.port) return undefined;
      return `the PostgreSQL server at DATABASE_URL (${server.host}:${server.port}) refused the connection: start it, or unset DATABASE_URL to use the embedded one`;
    },
  },
  {
    cause: "DATABASE_URL's user, password or database is wrong",
    explain: (error, { launcher }) => {
      const server = addressOf(launcher.DATABASE_URL, 5432);
      // SQLSTATE class 28: invalid authorization; 3D000: no such database.
      if (!server || typeof error.code !== 'string' || !/^(28...|3D000)$/.test(error.code)) return undefined;
      return `the PostgreSQL server at DATABASE_URL (${server.host}:${server.port}) refused the login (${error.message}): correct DATABASE_URL`;
    },
  },
  {
    cause: 'NATS_URL names a server that is not running',
    explain: (error, { launcher }) => {
      const server = addressOf(launcher.NATS_URL, 4222);
      const refused = (error.name === 'ConnectionError' && /refused/i.test(error.message)) || (error.code === 'ECONNREFUSED' && error.port === server?.port);
      if (!server || !refused) return undefined;
      return `the NATS server at NATS_URL (${server.host}:${server.port}) refused the connection: start it, or unset NATS_URL to carry events in process`;
    },
  },
];

/**
 * The one line `pnpm start` prints when the platform does not start: a known cause with its fix,
 * or the error's own first line and where to find the rest (the stack is logged at debug).
 */
export function explainStartupFailure(error: unknown, config: LocalConfig): string {
  const chain = causesOf(error);
  for (const { explain } of KNOWN_FAILURES) {
    for (const link of chain) {
      const line = explain(link, config);
      if (line) return `Cannot start: ${line}`;
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'an unknown error';
  return `Cannot start: ${first} (set LOG_LEVEL=debug for the details)`;
}

function portInUse(port: number, variable: string | undefined, suggestion?: number): string {
  if (!variable) return `port ${Number.isNaN(port) ? '(unknown)' : port} is in use: stop the other process`;
  return `port ${port} is in use (${variable}): stop the other process or set ${variable}=${suggestion ?? '<a free port>'}`;
}

/** The error, its causes, and the errors an AggregateError gathers (a host name tried on IPv4 and IPv6). */
function causesOf(error: unknown, seen = new Set<unknown>()): Error[] {
  if (!(error instanceof Error) || seen.has(error)) return [];
  seen.add(error);
  const inner = error instanceof AggregateError ? (error.errors as unknown[]) : [];
  return [error, ...causesOf(error.cause, seen), ...inner.flatMap((each) => causesOf(each, seen))];
}

/** host:port of a server URL, without its credentials. */
function addressOf(url: string | undefined, defaultPort: number): { host: string; port: number } | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : defaultPort };
}
