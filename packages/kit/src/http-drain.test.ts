import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readinessPropagated, type Drain } from './drain.js';
import { HttpDrain, type HttpDrainOptions } from './http-drain.js';

/** A keep-alive client on one raw connection, so that which connection carries a request is certain. */
class KeepAliveClient {
  private received = '';
  readonly closed: Promise<unknown>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (this.received += chunk));
    socket.on('error', () => undefined);
    this.closed = once(socket, 'close');
  }

  static async to(server: Server): Promise<KeepAliveClient> {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    return new KeepAliveClient(socket);
  }

  /** The head of the answer to one GET; rejects when the connection closes first (a reset, say). */
  async get(path: string): Promise<string> {
    this.received = '';
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: drain.test\r\n\r\n`);
    const answered = new Promise<string>((resolve, reject) => {
      const onData = () => {
        const end = this.received.indexOf('\r\n\r\n');
        if (end === -1 || !this.received.endsWith('ok')) return;
        this.socket.off('close', onClose);
        this.socket.off('data', onData);
        resolve(this.received.slice(0, end).toLowerCase());
      };
      const onClose = () => reject(new Error(`the connection closed before an answer (read: ${JSON.stringify(this.received)})`));
      this.socket.on('data', onData);
      this.socket.once('close', onClose);
    });
    return answered;
  }
}

let servers: Server[] = [];
/** The server's ends of the connections, in the order they opened. */
let accepted: Socket[] = [];

async function serving(keepAliveTimeout: number, options?: HttpDrainOptions): Promise<{ server: Server; drainer: HttpDrain }> {
  const server = createServer((_request, response) => response.end('ok'));
  server.keepAliveTimeout = keepAliveTimeout;
  server.on('connection', (socket: Socket) => accepted.push(socket));
  const drainer = new HttpDrain(server, options);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { server, drainer };
}

const closing = (server: Server) => () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));

afterEach(() => {
  for (const server of servers) server.closeAllConnections();
  servers = [];
  accepted = [];
});

describe('HttpDrain', () => {
  it('answers with Connection: close once a drain begins, and keeps the listener open for the delay', async () => {
    const { server, drainer } = await serving(5_000);
    const client = await KeepAliveClient.to(server);
    expect(await client.get('/before')).not.toContain('connection: close');

    const drain: Drain = { delayMs: 200, graceMs: 5_000 };
    const drained = drainer.drain(drain, closing(server));
    expect(drainer.draining).toBe(true);
    expect(await client.get('/during')).toContain('connection: close');
    const late = await KeepAliveClient.to(server);
    expect(await late.get('/new')).toContain('connection: close');
    expect(await drained).toBe(true);
    expect(server.listening).toBe(false);
  });

  it('leaves a caller its idle keep-alive connection after the delay, until the caller closes it', async () => {
    const { server, drainer } = await serving(10_000, { awaitClientsClosing: true });
    const client = await KeepAliveClient.to(server);
    await client.get('/first');

    const drain: Drain = { delayMs: 50, graceMs: 20_000 };
    const drained = drainer.drain(drain, closing(server));
    // Queued after the drain's own timer of the same length, so the drain is past its delay here:
    // closing now would close the connection this caller is about to write on.
    await readinessPropagated(drain);
    const head = await client.get('/after-the-delay');
    expect(head).toMatch(/^http\/1\.1 200/);
    expect(head).toContain('connection: close');
    expect(accepted).toHaveLength(1);

    await client.closed;
    expect(await drained).toBe(true);
    expect(server.listening).toBe(false);
  });

  it('closes a connection its caller keeps idle once the advertised keep-alive has passed', async () => {
    const { server, drainer } = await serving(300, { awaitClientsClosing: true });
    const client = await KeepAliveClient.to(server);
    await client.get('/first');
    // Its own idle timer would close it at 300 ms too; without that timer, only the drain's bound can.
    accepted[0]!.setTimeout(0);
    const drained = drainer.drain({ delayMs: 0, graceMs: 20_000 }, closing(server));
    expect(await drained).toBe(true);
    await client.closed;
    expect(server.listening).toBe(false);
  });

  it('closes idle connections right after the delay without the option (callers that ignore the hint)', async () => {
    const { server, drainer } = await serving(60_000);
    const client = await KeepAliveClient.to(server);
    await client.get('/first');
    expect(await drainer.drain({ delayMs: 0, graceMs: 20_000 }, closing(server))).toBe(true);
    await client.closed;
  });
});
