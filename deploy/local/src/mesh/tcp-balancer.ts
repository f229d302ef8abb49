import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface TcpBalancer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * What kube-proxy does for a ClusterIP Service, for `pnpm start:mesh`: each new connection goes to
 * the next backend, skipping one that refuses it (a replica restarting). Connection-level only,
 * which is all HTTP/1.1 callers need (the gateway's clients, its forwarding to the workflow
 * ingress); gRPC callers balance per call themselves (decisions §18.2).
 */
export async function startTcpBalancer(host: string, port: number, backends: readonly number[]): Promise<TcpBalancer> {
  let next = 0;
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => open.delete(socket));
  };
  const connect = (client: Socket, attemptsLeft: number) => {
    const backend = backends[next++ % backends.length]!;
    const upstream = createConnection(backend, host);
    upstream.once('connect', () => {
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    upstream.once('error', () => {
      upstream.destroy();
      if (attemptsLeft > 1 && !client.destroyed) connect(client, attemptsLeft - 1);
      else client.destroy();
    });
  };
  const server = createServer({ pauseOnConnect: true }, (client) => {
    track(client);
    connect(client, backends.length);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
}
