import pg from 'pg';
import type { Logger } from '@agent-platform/kit';

export interface DatabaseServer {
  /** `postgres://…/<name>` for a database on this server. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

/** Creates each database the server lacks; an existing one (and its data) is kept. */
export async function createMissingDatabases(client: pg.Client, databases: readonly string[]): Promise<string[]> {
  const existing = await client.query<{ datname: string }>('SELECT datname FROM pg_database');
  const names = new Set(existing.rows.map((row) => row.datname));
  const missing = databases.filter((name) => !names.has(name));
  for (const database of missing) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  return missing;
}

/**
 * A PostgreSQL server the operator runs (`DATABASE_URL`): the service databases are created on it
 * when missing, as the embedded server does, so one variable is all a laptop with PostgreSQL needs.
 */
export async function useDatabaseServer(serverUrl: string, databases: readonly string[], logger: Logger): Promise<DatabaseServer> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const created = await createMissingDatabases(client, databases);
    if (created.length > 0) logger.info({ databases: created }, 'created the service databases');
  } finally {
    await client.end();
  }
  const base = new URL(serverUrl);
  return {
    urlFor: (name) => Object.assign(new URL(base), { pathname: `/${name}` }).toString(),
    stop: () => Promise.resolve(),
  };
}
