import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { settlesWithin } from './timeout.js';
import { readinessPropagated, type Drain } from './drain.js';

export interface HttpDrainOptions {
  /**
   * After the delay, let the clients close their keep-alive connections before the listener
   * closes, for at most the server's `keepAliveTimeout` (and half the grace). Closing a connection
   * that looks idle races a client writing its next request on it: the request meets a reset and
   * its caller a 5xx. A client that honours the `Keep-Alive: timeout` the server advertises (undici
   * closes 2 s before it) never loses that race. For servers whose callers do: the workflow
   * ingress, whose one caller is the gateway.
   */
  awaitClientsClosing?: boolean;
}

/**
 * An HTTP server's part of a drain (decisions §18.3). Once `drain` begins, `draining` is true (the
 * readiness answer says so) and every answer carries `Connection: close`, so keep-alive callers
 * open their next connection elsewhere; the listener stays open for the drain's delay, while the
 * load balancers in front notice, then closes, and requests in flight get the grace to finish.
 * Nothing is answered 503 for closing: whatever still arrives is served.
 */
export class HttpDrain {
  private began = false;
  private readonly open = new Set<Socket>();
  private allClosed: (() => void) | undefined;

  constructor(
    private readonly server: Server,
    private readonly options: HttpDrainOptions = {},
  ) {
    // Before the framework's own listener, which may answer in the same tick.
    server.prependListener('request', (_request, response) => {
      if (this.began) response.setHeader('connection', 'close');
    });
    if (options.awaitClientsClosing) {
      server.on('connection', (socket: Socket) => {
        this.open.add(socket);
        socket.once('close', () => {
          this.open.delete(socket);
          if (this.open.size === 0) this.allClosed?.();
        });
      });
    }
  }

  get draining(): boolean {
    return this.began;
  }

  /** `close` stops listening and resolves once requests in flight are answered; false when the grace ran out first. */
  async drain(drain: Drain, close: () => Promise<void>): Promise<boolean> {
    this.began = true;
    await readinessPropagated(drain);
    const closed = this.clientsClosing(Math.min(this.server.keepAliveTimeout, drain.graceMs / 2)).then(close);
    return settlesWithin(closed, drain.graceMs);
  }

  /** Resolves once every connection is closed (each answer now says `Connection: close`), or after `boundMs`. */
  private async clientsClosing(boundMs: number): Promise<void> {
    if (!this.options.awaitClientsClosing || this.open.size === 0) return;
    const gone = new Promise<void>((resolve) => (this.allClosed = resolve));
    await settlesWithin(gone, boundMs);
    this.allClosed = undefined;
  }
}
