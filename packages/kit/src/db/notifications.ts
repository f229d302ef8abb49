import pg from 'pg';
import { backoffDelay } from '../backoff.js';
import type { Logger } from '../logger.js';

const RECONNECT = { initialMs: 200, maxMs: 5_000 };

/**
 * One LISTEN connection to a channel, shared by everything in the process that waits on it: a
 * waiter is woken by a notification whose payload is its key (a run's id, say), or after its
 * time-out. A lost connection is opened again after a back-off; meanwhile waiters fall back on
 * their time-outs, so they are late, never stuck.
 */
export class PgNotifications {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly stopping = new AbortController();
  private client: pg.Client | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: { clientUrl: string; channel: string; logger: Logger; applicationName: string }) {}

  start(): void {
    this.running ??= this.keepListening();
  }

  /** Resolves when `key` is notified, after `timeoutMs`, or when `signal` aborts, whichever is first. */
  wait(key: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        const waiting = this.waiters.get(key);
        waiting?.delete(done);
        if (waiting?.size === 0) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      let waiting = this.waiters.get(key);
      if (!waiting) this.waiters.set(key, (waiting = new Set()));
      waiting.add(done);
    });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.client?.end().catch(() => undefined);
    await this.running;
    for (const waiting of this.waiters.values()) for (const done of [...waiting]) done();
  }

  private async keepListening(): Promise<void> {
    const { clientUrl, channel, logger, applicationName } = this.options;
    for (let failures = 0; !this.stopping.signal.aborted; ) {
      const client = new pg.Client({ connectionString: clientUrl, application_name: applicationName, keepAlive: true, connectionTimeoutMillis: 5_000 });
      this.client = client;
      const lost = new Promise<void>((resolve) => {
        client.on('error', (error) => {
          if (!this.stopping.signal.aborted) logger.warn({ err: error, channel }, 'notification connection lost');
          resolve();
        });
        client.on('end', () => resolve());
      });
      client.on('notification', (message) => {
        for (const done of [...(this.waiters.get(message.payload ?? '') ?? [])]) done();
      });
      try {
        await client.connect();
        await client.query(`listen "${channel}"`);
        failures = 0;
        await lost;
      } catch (error) {
        if (!this.stopping.signal.aborted) logger.warn({ err: error, channel }, 'could not listen for notifications; retrying');
      }
      await client.end().catch(() => undefined);
      if (this.stopping.signal.aborted) return;
      failures += 1;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoffDelay(failures, RECONNECT));
        this.stopping.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  }
}
