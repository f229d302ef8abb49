import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests answered so far. */
  received(): number;
  close(): void;
}

/** A local peer for integration nodes: answers every request 200 `{"ok":true}` once its body is read, and counts them. */
export async function startCountingReceiver(): Promise<CountingReceiver> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The `p`th percentile (0–100) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
