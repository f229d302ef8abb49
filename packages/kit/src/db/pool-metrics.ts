import { metrics } from '@opentelemetry/api';
import type pg from 'pg';

/**
 * The names under which the connection-pool metrics of OpenTelemetry's database conventions are
 * reported, for the pools this process opens. The pg instrumentation reports them too, adding
 * differences on every checkout and return, but keeps one last count for all pools
 * (open-telemetry/opentelemetry-js-contrib#3354): with several pools (the all-in-one mode has four)
 * it reported negative connections. Its copies are dropped (`PgQueryInstrumentation`) and these
 * are read from each pool when scraped: right per pool, and nothing to do per query.
 */
export const POOL_METRIC_NAMES = ['db.client.connection.count', 'db.client.connection.pending_requests', 'db.client.connection.max'] as const;

interface ObservedPool {
  pool: pg.Pool;
  attributes: { 'db.client.connection.pool.name': string };
  max: number;
}

const observed = new Set<ObservedPool>();
let registered = false;

/**
 * Reports `pool`'s connections (used and idle), requests waiting for one and its size, under
 * `name` (`host:port/database`, as the conventions' examples and the instrumentation name it),
 * until the pool is ended.
 */
export function observePool(pool: pg.Pool, name: string, max: number): void {
  // The meter is asked for on first use, after the telemetry hook has installed the SDK.
  if (!registered) registerInstruments();
  observed.add({ pool, attributes: { 'db.client.connection.pool.name': name }, max });
}

function registerInstruments(): void {
  registered = true;
  const meter = metrics.getMeter('@agent-platform/kit/db');
  const [countName, pendingName, maxName] = POOL_METRIC_NAMES;
  const count = meter.createObservableUpDownCounter(countName, { unit: '{connection}', description: 'Connections of the pool, by state (used or idle).' });
  const pending = meter.createObservableUpDownCounter(pendingName, { unit: '{request}', description: 'Requests waiting for a connection of the pool.' });
  const max = meter.createObservableUpDownCounter(maxName, { unit: '{connection}', description: 'Connections the pool may open.' });
  meter.addBatchObservableCallback(
    (result) => {
      for (const entry of observed) {
        const { pool, attributes } = entry;
        // An ended pool holds nothing: it is reported so once (the exporter keeps a series it
        // saw at its last value), then no more.
        if (pool.ended) observed.delete(entry);
        const idle = pool.idleCount;
        result.observe(count, pool.totalCount - idle, { ...attributes, 'db.client.connection.state': 'used' });
        result.observe(count, idle, { ...attributes, 'db.client.connection.state': 'idle' });
        result.observe(pending, pool.waitingCount, attributes);
        result.observe(max, pool.ended ? 0 : entry.max, attributes);
      }
    },
    [count, pending, max],
  );
}
