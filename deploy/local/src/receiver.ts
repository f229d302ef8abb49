import { createServer, type IncomingMessage } from 'node:http';

/**
 * `pnpm receiver`: a target on this machine for the README's tools, workflows and webhooks, so they
 * can be tried with no internet and no DNS. Every request is answered 200 with what was received,
 * as JSON, and printed in one line. `pnpm start` lets outbound calls reach loopback while its API
 * answers on loopback only (decisions §8.3).
 */

const DEFAULT_PORT = 9090;
/** A receiver for trying things out: a body larger than this is cut, not kept whole. */
const BODY_MAX = 1024 * 1024;
const PRINTED_BODY_MAX = 300;

const port = portOf(process.env.RECEIVER_PORT);

const server = createServer((request, response) => {
  void readBody(request).then((text) => {
    const body = parsed(text);
    const received = { method: request.method, path: request.url, body };
    const event = request.headers['webhook-id'] === undefined ? '' : ` (webhook ${String(request.headers['webhook-id'])})`;
    const printed = text.length > PRINTED_BODY_MAX ? `${text.slice(0, PRINTED_BODY_MAX)}…` : text;
    process.stdout.write(`${request.method ?? 'GET'} ${request.url ?? '/'}${event} ${printed}\n`);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ received }));
  }, () => response.destroy());
});

server.on('error', (error: NodeJS.ErrnoException) => {
  const why = error.code === 'EADDRINUSE' ? `port ${port} is in use: stop the other process or set RECEIVER_PORT` : error.message;
  process.stderr.write(`Cannot start the receiver: ${why}\n`);
  process.exit(1);
});

server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : port;
  process.stdout.write(`Receiver at http://127.0.0.1:${listening}: answers every request with what it received, and prints it here. Ctrl-C stops it.\n`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
  });
}

function portOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PORT;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    process.stderr.write(`Cannot start the receiver: RECEIVER_PORT must be a port number, not ${text}\n`);
    process.exit(1);
  }
  return value;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    if (size < BODY_MAX) chunks.push(chunk.subarray(0, BODY_MAX - size));
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parsed(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
