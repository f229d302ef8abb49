import { describe, expect, it } from 'vitest';
import { WatchedSource } from '../../test/support/upload-source.js';
import { EchoServiceService, UPLOAD_SERVICE, UploadServiceService } from '../../test/support/upload-service.js';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind } from './metadata.js';
import { GrpcServer } from './server.js';

// A client stream's call as a server's lifecycle sees it (stop, drain, cut), and the methods the kit refuses.

const logger = createLogger({ service: 'kit-test', level: 'silent' });
const principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };

/** A server whose upload reads its first chunk, then waits for `release` to read the rest and answer. */
function pausedServer() {
  const started = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  const server = new GrpcServer({ logger }).add(UPLOAD_SERVICE, UploadServiceService, {
    upload: async (requests) => {
      let chunks = 0;
      for await (const _chunk of requests) {
        chunks += 1;
        if (chunks === 1) {
          started.resolve();
          await released.promise;
        }
      }
      return { size: 0, chunks, note: 'late' };
    },
  });
  return { server, started: started.promise, release: () => released.resolve() };
}

const transports = [
  { transport: 'HTTP/2', open: (_server: GrpcServer, port: number) => new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 30_000 }) },
  { transport: 'the in-process transport', open: (server: GrpcServer) => new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 30_000 }) },
];

describe.each(transports)('stopping a server with an upload running, over $transport', ({ open }) => {
  it('lets the upload finish before it stops, refusing new calls meanwhile', async () => {
    const { server, started, release } = pausedServer();
    const channel = open(server, await server.listen('127.0.0.1', 0));
    const uploads = channel.client(UploadServiceService);
    const answer = uploads.upload(new WatchedSource({ count: 4 }), { principal });
    await started;
    const settled: string[] = [];
    const stopped = server.stop(5_000).then(() => settled.push('stopped'));
    await expect(uploads.upload(new WatchedSource({ count: 1 }), { principal, deadlineMs: 500 })).rejects.toMatchObject({ code: 'service_unavailable' });
    // The sentinel: the refused call took its time, and the stop still waits for the running one.
    expect(settled).toEqual([]);
    release();
    expect(await answer).toEqual({ size: 0, chunks: 4, note: 'late' });
    await stopped;
    expect(settled).toEqual(['stopped']);
    channel.close();
  });

  it('cuts an upload still running when the grace period ends, closing its source', async () => {
    const { server, started, release } = pausedServer();
    const channel = open(server, await server.listen('127.0.0.1', 0));
    const source = new WatchedSource();
    const answer = channel.client(UploadServiceService).upload(source, { principal }).catch((error: unknown) => error);
    await started;
    await server.stop(50);
    expect(await answer).toMatchObject({ code: 'service_unavailable' });
    await source.closed;
    release();
    channel.close();
  });
});

describe('a method that streams both ways', () => {
  const echo = '/agentplatform.kittest.v1.EchoService/Echo streams both ways';

  it('is refused, by name, when a client is made for its service', () => {
    const channel = new GrpcChannel('127.0.0.1:1');
    // @ts-expect-error -- the types refuse it too: it is no RpcServiceDefinition
    expect(() => channel.client(EchoServiceService)).toThrow(echo);
    channel.close();
  });

  it('is refused, by name, when a server adds its service, of which nothing is then served', async () => {
    const server = new GrpcServer({ logger });
    const mixed = { upload: UploadServiceService.upload, echo: EchoServiceService.echo };
    const handlers = { upload: () => Promise.reject(new Error('not called')), echo: () => Promise.reject(new Error('not called')) };
    // @ts-expect-error -- the types refuse it too: it is no RpcServiceDefinition
    expect(() => server.add(UPLOAD_SERVICE, mixed, handlers)).toThrow(echo);
    await server.listen('127.0.0.1', 0);
    const channel = new GrpcChannel(server.inProcess());
    await expect(channel.client(UploadServiceService).upload(new WatchedSource({ count: 1 }), { principal })).rejects.toMatchObject({ code: 'internal_error' });
    channel.close();
    await server.stop(1_000);
  });
});
