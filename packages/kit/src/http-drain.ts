import type { Server } from 'node:http';
import { settlesWithin } from './timeout.js';
import { readinessPropagated, type Drain } from './drain.js';

/**
 * An HTTP server's part of a drain (decisions §18.3). Once `drain` begins, `draining` is true (the
 * readiness answer says so) and every answer carries `Connection: close`, so keep-alive callers
 * open their next connection elsewhere; the listener stays open for the drain's delay, while the
 * load balancers in front notice, then closes, and requests in flight get the grace to finish.
 * Nothing is answered 503 for closing: whatever still arrives is served.
 */
export class HttpDrain {
  private began = false;

  constructor(server: Server) {
    // Before the framework's own listener, which may answer in the same tick.
    server.prependListener('request', (_request, response) => {
      if (this.began) response.setHeader('connection', 'close');
    });
  }

  get draining(): boolean {
    return this.began;
  }

  /** `close` stops listening and resolves once requests in flight are answered; false when the grace ran out first. */
  async drain(drain: Drain, close: () => Promise<void>): Promise<boolean> {
    this.began = true;
    await readinessPropagated(drain);
    return settlesWithin(close(), drain.graceMs);
  }
}
