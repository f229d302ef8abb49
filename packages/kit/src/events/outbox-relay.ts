import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Orm } from '../db/orm.js';
import type { Logger } from '../logger.js';
import type { EventBus, RetryBackoff } from './bus.js';
import { parseEnvelope } from './envelope.js';
import { OUTBOX_NOTIFY_CHANNEL } from './outbox.js';
import { metrics } from '@opentelemetry/api';
import { parseTraceCarrier, publishAllInTraceContext } from './trace-context.js';
import { backoffDelay, settlesWithin, sleep } from './timing.js';

export interface OutboxRelayOptions {
  /** The service's ORM; the relay opens one connection of its own to the same database. */
  orm: Orm;
  bus: EventBus;
  logger: Logger;
  /** Fallback poll for rows whose notification was missed, and how often a stand-by tries to take over; default 1,000 ms. */
  pollIntervalMs?: number;
  /** Back-off while the bus rejects or the database is away; default 100 ms doubling to 30 s. */
  retry?: RetryBackoff;
  /** Rows read per query; default 100. */
  batchSize?: number;
  /** Bound on stop; a publish still running then is abandoned (the row stays unpublished); default 5,000 ms. */
  stopTimeoutMs?: number;
}

/** The session advisory lock that makes one relay per database the publisher (locks are per database). */
const RELAY_LOCK_KEY = (createHash('sha256').update('outbox-relay').digest().readBigInt64BE(0) & 0x7fff_ffff_ffff_ffffn).toString();

interface OutboxRow {
  id: string;
  json: string;
  trace: string | null;
  /** Seconds from the row's commit to the relay reading it (by the database's clock). */
  waited: number;
}

const outboxLag = metrics.getMeter('@agent-platform/kit/events').createHistogram('outbox.publish.lag', {
  unit: 's',
  description: 'Time from an event being recorded in the outbox to the relay publishing it.',
  advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] },
});

/**
 * Publishes a service's outbox through the EventBus, oldest first (`created_at, id`), a run of
 * rows at a time, stamping `published_at` once the run is accepted (a row published and not yet
 * stamped when the relay dies is published again: consumers de-duplicate on the event id). Replicas all run one; the holder of a session
 * advisory lock on the relay's own connection publishes and the others stand by, taking over when
 * its connection dies, so rows go out in order. It wakes on the outbox trigger's NOTIFY (plus a
 * fallback poll) and, while the bus rejects, retries the same run with back-off: writes continue.
 */
export class OutboxRelay {
  private readonly stopping = new AbortController();
  private readonly pollIntervalMs: number;
  private readonly retry: RetryBackoff;
  private loop: Promise<void> | undefined;
  private client: pg.Client | undefined;
  private leader = false;
  private pendingWake = false;
  private wakeWaiter: (() => void) | undefined;

  constructor(private readonly options: OutboxRelayOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.retry = options.retry ?? { initialMs: 100, maxMs: 30_000 };
  }

  /** True while this relay holds the lock and publishes. */
  get active(): boolean {
    return this.leader;
  }

  /** Starts in the background; an unreachable database is retried, not thrown. */
  start(): Promise<void> {
    if (this.loop) throw new Error('The outbox relay is already started.');
    this.loop = this.run();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    if (!this.loop || this.stopping.signal.aborted) return;
    this.stopping.abort();
    this.wake();
    if (!(await settlesWithin(this.loop, this.options.stopTimeoutMs ?? 5_000))) {
      this.options.logger.warn('outbox relay did not stop in time; closing its connection');
      // Closing the connection releases the lock; the abandoned row is re-published by the next holder.
      await this.client?.end().catch(() => undefined);
    }
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    let failures = 0;
    while (!this.stopping.signal.aborted) {
      const session = new AbortController();
      try {
        const client = await this.connect(session);
        failures = 0;
        await this.serve(client, session.signal);
      } catch (error) {
        if (!this.stopping.signal.aborted) logger.warn({ err: error }, 'outbox relay lost its database connection; reconnecting');
        failures += 1;
      } finally {
        session.abort();
        if (this.leader) logger.info('outbox relay stepped down');
        this.leader = false;
        await this.client?.end().catch(() => undefined);
        this.client = undefined;
      }
      if (!this.stopping.signal.aborted) await sleep(backoffDelay(failures, this.retry), this.stopping.signal);
    }
  }

  private async connect(session: AbortController): Promise<pg.Client> {
    const clientUrl = this.options.orm.config.get('clientUrl');
    if (!clientUrl) throw new Error('The outbox relay needs an ORM configured with a clientUrl.');
    const client = new pg.Client({ connectionString: clientUrl, application_name: 'outbox-relay', keepAlive: true, connectionTimeoutMillis: 5_000 });
    this.client = client;
    // A dead connection has lost the lock: stop publishing at once, another relay may take over.
    const lost = () => {
      session.abort();
      this.wake();
    };
    client.on('error', (error) => {
      this.options.logger.warn({ err: error }, 'outbox relay connection error');
      lost();
    });
    client.on('end', lost);
    client.on('notification', () => this.wake());
    await client.connect();
    await client.query(`listen "${OUTBOX_NOTIFY_CHANNEL}"`);
    return client;
  }

  /** Publishes while holding the lock, otherwise keeps trying to take it; returns when stopping. */
  private async serve(client: pg.Client, session: AbortSignal): Promise<void> {
    while (!this.stopping.signal.aborted) {
      if (session.aborted) throw new Error('The relay connection was lost.');
      this.pendingWake = false;
      if (!this.leader) {
        const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [RELAY_LOCK_KEY]);
        this.leader = rows[0]?.locked === true;
        if (this.leader) this.options.logger.info('outbox relay active');
      }
      if (this.leader) await this.drain(client, session);
      await this.waitForWake(this.pollIntervalMs);
    }
  }

  /**
   * Publishes every unpublished row, in order, until none is left: each read's rows as one run
   * (`publishAll`) stamped by one statement, so a busy process spends a few turns of its event
   * loop per hundred events rather than a few per event.
   */
  private async drain(client: pg.Client, session: AbortSignal): Promise<void> {
    const batchSize = this.options.batchSize ?? 100;
    while (!this.stopping.signal.aborted) {
      const { rows } = await client.query<OutboxRow>(
        // payload::text is the stored text itself: a `json` column keeps it as written.
        'select id, payload::text as json, trace_context::text as trace, extract(epoch from clock_timestamp() - created_at)::float8 as waited from outbox where published_at is null order by created_at, id limit $1',
        [batchSize],
      );
      if (rows.length === 0) return;
      const read = performance.now();
      if (!(await this.publish(rows, session))) return;
      const { system } = this.options.bus;
      const publishedAfter = (performance.now() - read) / 1000;
      for (const row of rows) outboxLag.record(row.waited + publishedAfter, { 'messaging.system': system });
      await client.query('update outbox set published_at = now() where id = any($1::text[])', [rows.map((row) => row.id)]);
    }
  }

  /** Publishes the rows as one run, retrying with back-off while the bus rejects. False when interrupted. */
  private async publish(rows: readonly OutboxRow[], session: AbortSignal): Promise<boolean> {
    const { bus, logger } = this.options;
    const events = rows.flatMap((row) => {
      const envelope = parseEnvelope(row.json);
      // Cannot happen through recordEvent; holding every later event back for it would be worse.
      if (!envelope) logger.error({ eventId: row.id }, 'outbox row is not an event envelope; skipped');
      return envelope ? [{ envelope, json: row.json, carrier: parseTraceCarrier(row.trace) }] : [];
    });
    if (events.length === 0) return true;
    const spans = events.map(({ envelope, carrier }) => ({ carrier, info: { system: bus.system, eventType: envelope.type, eventId: envelope.id } }));
    for (let attempt = 1; ; attempt += 1) {
      if (this.stopping.signal.aborted || session.aborted) return false;
      try {
        await publishAllInTraceContext(spans, (carriers) => bus.publishAll(events.map(({ envelope, json }, index) => ({ envelope, json, trace: carriers[index] ?? null }))));
        if (attempt > 1) logger.info({ eventId: events[0]!.envelope.id, events: events.length, attempt }, 'event bus accepted the events again');
        return true;
      } catch (error) {
        const delayMs = backoffDelay(attempt, this.retry);
        logger.warn({ err: error, eventId: events[0]!.envelope.id, events: events.length, attempt, delayMs }, 'event bus rejected the events; retrying');
        await sleep(delayMs, AbortSignal.any([this.stopping.signal, session]));
      }
    }
  }

  private wake(): void {
    this.pendingWake = true;
    this.wakeWaiter?.();
  }

  private async waitForWake(ms: number): Promise<void> {
    if (this.pendingWake || this.stopping.signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeWaiter = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeWaiter = done;
    });
  }
}
