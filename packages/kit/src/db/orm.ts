import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, TransactionContext, type EntityManager, type EntitySchema, type MigrationObject } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from '../logger.js';
import { settlesWithin } from '../timeout.js';
import { observePool } from './pool-metrics.js';

export type Orm = MikroORM;
export type { EntityManager } from '@mikro-orm/postgresql';

/** A migration class under a stable name (class names do not survive bundling). */
export type NamedMigration = MigrationObject;

export interface OrmOptions {
  /** `postgres://user@host:port/database` */
  clientUrl: string;
  entities: readonly EntitySchema[];
  /** Applied in order at start, before the ORM is handed out. */
  migrations: readonly NamedMigration[];
  logger: Logger;
  /** Connections in the pool; default 10. */
  poolMax?: number;
  /** How long a query waits for a pooled connection before failing; default 5,000 ms. */
  connectTimeoutMs?: number;
  /**
   * How long a connection that died while checked out may stay so before the pool takes its slot
   * back; default 1,000 ms, enough for a holder that does release it (in a `finally`).
   */
  deadClientGraceMs?: number;
}

/**
 * How long an unused pooled connection stays open. pg's default, 10 s, closed the whole pool in
 * any quiet spell longer than that, so the next burst of requests waited for new connections, each
 * a new PostgreSQL backend with cold caches whose prepared statements had to be prepared again.
 */
const POOL_IDLE_MS = 10 * 60_000;

/**
 * Connects to PostgreSQL and applies pending migrations explicitly, once, before anything else
 * runs. Replicas starting together serialise on an advisory lock, so each migration runs once.
 */
export async function initOrm(options: OrmOptions): Promise<Orm> {
  const logger = options.logger.child({ component: 'db' });
  const poolMax = options.poolMax ?? 10;
  const orm = await MikroORM.init({
    clientUrl: options.clientUrl,
    entities: [...options.entities],
    extensions: [Migrator],
    pool: { min: 0, max: poolMax, idleTimeoutMillis: POOL_IDLE_MS },
    driverOptions: {
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      onPoolCreated: (pool: pg.Pool) => {
        evictDeadClients(pool, options.deadClientGraceMs ?? DEAD_CLIENT_GRACE_MS);
        observePool(pool, poolName(options.clientUrl), poolMax);
      },
    },
    migrations: {
      migrationsList: [...options.migrations],
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    debug: false,
    colors: false,
    logger: (message) => logger.debug(message),
  });
  // The running call's fork of this ORM's EntityManager (see requestContext), in place of
  // MikroORM's RequestContext, which forks every call up front.
  orm.config.set('context', () => calls.getStore()?.forkOf(orm.em));
  try {
    await migrate(orm, options.clientUrl, logger);
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  return orm;
}

async function migrate(orm: Orm, clientUrl: string, logger: Logger): Promise<void> {
  // A session lock needs one connection held for the whole run; the migrator uses the pool.
  const lockClient = new pg.Client({ connectionString: clientUrl });
  await lockClient.connect();
  try {
    await lockClient.query('select pg_advisory_lock($1)', [migrationLockKey(clientUrl)]);
    const applied = await orm.migrator.up();
    for (const migration of applied) logger.info({ migration: migration.name }, 'applied migration');
  } finally {
    await lockClient.end();
  }
}

/** One lock per database; 63 bits of a hash so it fits PostgreSQL's bigint. */
function migrationLockKey(clientUrl: string): string {
  const database = new URL(clientUrl).pathname.slice(1) || 'postgres';
  const digest = createHash('sha256').update(`migrations:${database}`).digest();
  return (digest.readBigInt64BE(0) & 0x7fff_ffff_ffff_ffffn).toString();
}

/**
 * Closes the pool, waiting at most `timeoutMs` for connections still checked out, so a stuck
 * query cannot hold a shutdown open. False when it gave up waiting.
 */
export async function closeOrm(orm: Orm, timeoutMs = 5_000): Promise<boolean> {
  return settlesWithin(orm.close(), timeoutMs);
}

/**
 * A call's EntityManager fork, made the first time the call needs one. A fork costs more than
 * the prepared read that is all many calls run (GET /auth/me's profile: MikroORM was ~5 % of its
 * CPU, most of it forking), and such a read needs no identity map.
 */
class CallContext {
  private readonly root: EntityManager;
  private fork: EntityManager | undefined;
  private forking = false;

  constructor(root: EntityManager) {
    this.root = root;
  }

  /**
   * The fork of `root` for this call, or undefined for another ORM's EntityManager, and while the
   * fork is being made: its constructor resolves the context too, and must then get itself.
   */
  forkOf(root: EntityManager): EntityManager | undefined {
    if (root !== this.root) return undefined;
    if (this.fork === undefined && !this.forking) {
      this.forking = true;
      try {
        // Made inside MikroORM's context resolution, so the fork must not resolve it again.
        this.fork = root.fork({ useContext: true, disableContextResolution: true });
      } finally {
        this.forking = false;
      }
    }
    return this.fork;
  }

  /** Whether `em` is this call's root EntityManager and no fork of it has been made. */
  unforked(em: EntityManager): boolean {
    return em === this.root && this.fork === undefined;
  }
}

const calls = new AsyncLocalStorage<CallContext>();

/**
 * GrpcServer's `around`: every call runs with its own EntityManager fork (its own identity map),
 * so the global `orm.em` that repositories hold resolves to that fork inside the call.
 */
export function requestContext(orm: Orm): <T>(run: () => Promise<T>) => Promise<T> {
  return (run) => calls.run(new CallContext(orm.em), run);
}

/**
 * `em.isInTransaction()` without making the call's fork to answer it: a fork not made yet has
 * begun no transaction, so only a transaction running in this async context (`em.transactional`)
 * counts then.
 */
export function isInTransaction(em: EntityManager): boolean {
  if (calls.getStore()?.unforked(em) !== true) return em.isInTransaction();
  return TransactionContext.getEntityManager(em.name)?.isInTransaction() ?? false;
}

/** `host:port/database`, the pool's name in its metrics. */
function poolName(clientUrl: string): string {
  const url = new URL(clientUrl);
  return `${url.hostname}:${url.port || 5432}${url.pathname}`;
}

// ms a dead client may stay checked out by default: see OrmOptions.deadClientGraceMs.
const DEAD_CLIENT_GRACE_MS = 1_000;

/**
 * Evicts pooled connections that died while checked out and were never handed back. Kysely
 * 0.29 releases a transaction's connection only after a successful ROLLBACK; when the server
 * has dropped the connection (restart, failover, `pg_terminate_backend`) that ROLLBACK fails and
 * the slot is lost for good, so a few failovers would starve the pool into permanent 503s.
 */
function evictDeadClients(pool: pg.Pool, graceMs: number): void {
  const checkedOut = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('connect', (client) => {
    client.once('end', () => {
      setTimeout(() => {
        if (!checkedOut.has(client)) return;
        checkedOut.delete(client);
        try {
          client.release(new Error('The connection ended while checked out.'));
        } catch {
          // Its holder released it after all.
        }
      }, graceMs).unref();
    });
  });
}

/** A service assembled on its freshly opened database; the pool is closed again if assembling throws. */
export async function assembleOnDatabase<T>(opening: Promise<Orm>, assemble: (orm: Orm) => T): Promise<T> {
  const orm = await opening;
  try {
    return assemble(orm);
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}
