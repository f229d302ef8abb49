import { AsyncLocalStorage } from 'node:async_hooks';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, chunk, WatchedSource } from '../../test/support/upload-source.js';
import { UPLOAD_SERVICE, UploadServiceService, type UploadChunk, type UploadResult } from '../../test/support/upload-service.js';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { startTelemetry } from '../telemetry/index.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { GrpcServer, type CallContext } from './server.js';

// Client streaming through GrpcServer and GrpcChannel, on the kit's test UploadService.

await startTelemetry({ serviceName: 'kit-test' });

const principal: Principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };

/** Stands for the MikroORM RequestContext that `around` opens per call. */
const requestScope = new AsyncLocalStorage<number>();
let arounds = 0;

/** What a handler saw of a call that ended before the caller's stream did. */
interface Seen {
  read: number;
  error: unknown;
  signalAborted: boolean;
}
let seen = Promise.withResolvers<Seen>();
let firstRead = Promise.withResolvers<void>();
/** The chunks the last call's handler received. */
let received: UploadChunk[] = [];
/** Chunks the slow handler has taken. */
let consumed = 0;

beforeEach(() => {
  seen = Promise.withResolvers<Seen>();
  firstRead = Promise.withResolvers<void>();
  received = [];
  consumed = 0;
});

function total(chunks: number, note = ''): UploadResult {
  return { size: chunks * CHUNK_BYTES, chunks, note };
}

/** How the handler behaves, chosen by the call's request id. */
const scenarios: Record<string, (requests: AsyncIterable<UploadChunk>, ctx: CallContext) => Promise<UploadResult>> = {
  async all(requests, ctx) {
    for await (const message of requests) received.push(message);
    const traceId = trace.getActiveSpan()?.spanContext().traceId ?? '';
    const note = `${ctx.principal?.userId ?? ''} around:${requestScope.getStore() ?? 'none'} trace:${traceId}`;
    return { size: received.reduce((sum, { data }) => sum + data.length, 0), chunks: received.length, note };
  },
  async slow(requests) {
    for await (const _message of requests) {
      consumed += 1;
      await sleep(2);
    }
    return total(consumed);
  },
  async enough(requests) {
    let read = 0;
    for await (const _message of requests) if (++read === 3) break;
    return total(read, 'enough');
  },
  async 'too-large'(requests) {
    let read = 0;
    for await (const _message of requests) {
      if (++read === 2) throw new DomainError('payload_too_large', 'The upload is over its limit.');
    }
    return total(read);
  },
  async watch(requests, ctx) {
    let read = 0;
    try {
      for await (const _message of requests) {
        read += 1;
        firstRead.resolve();
      }
    } catch (error) {
      seen.resolve({ read, error, signalAborted: ctx.signal.aborted });
      throw error;
    }
    seen.resolve({ read, error: undefined, signalAborted: ctx.signal.aborted });
    return total(read);
  },
  async crash(requests) {
    for await (const _message of requests) throw new Error('secret internals');
    return total(0);
  },
};

const server = new GrpcServer({
  logger: createLogger({ service: 'kit-test', level: 'silent' }),
  around: (run) => requestScope.run(++arounds, run),
}).add(UPLOAD_SERVICE, UploadServiceService, {
  upload: (requests, ctx) => {
    const scenario = scenarios[ctx.requestId ?? ''];
    return scenario ? scenario(requests, ctx) : Promise.reject(new Error(`no scenario ${ctx.requestId}`));
  },
});
let address: string;

beforeAll(async () => {
  address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});
afterAll(async () => {
  await server.stop(1_000);
});

/**
 * Each transport with how far a caller may read ahead of the handler. Over HTTP/2: grpc-js takes
 * the first 256 KiB (4 chunks) at once, keeping them to resend on a retry; its writable buffers 16
 * messages; flow control lets about a 64 KiB window through; the server's readable buffers 16
 * more (47 seen). In process: the queue's 16, the one the handler holds and the one being written.
 * Either is far below the 160 an unchecked caller reads.
 */
const transports = [
  { transport: 'HTTP/2', mostInFlight: 64, open: () => new GrpcChannel(address, { defaultDeadlineMs: 5_000 }) },
  { transport: 'the in-process transport', mostInFlight: 18, open: () => new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 5_000 }) },
];

describe.each(transports)('client streaming over $transport', ({ open, mostInFlight }) => {
  let channel: GrpcChannel;
  beforeAll(() => {
    channel = open();
  });
  afterAll(() => channel.close());

  const upload = (source: AsyncIterable<UploadChunk>, call: { requestId: string; deadlineMs?: number; signal?: AbortSignal }) =>
    channel.client(UploadServiceService).upload(source, { principal, ...call });

  it('delivers every message in order, as protobuf, to a handler run once inside `around` in the caller trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const remote = trace.setSpanContext(context.active(), { traceId, spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true });
    const sent = [chunk(1, 10), chunk(2, CHUNK_BYTES), chunk(3, 0), chunk(4, 3)];
    const aroundsBefore = arounds;
    // A Node stream, as an upload's file would be.
    const result = await context.with(remote, () => upload(Readable.from(sent), { requestId: 'all' }));
    expect(result).toEqual({ size: 10 + CHUNK_BYTES + 3, chunks: 4, note: `usr_01 around:${aroundsBefore + 1} trace:${traceId}` });
    expect(arounds).toBe(aroundsBefore + 1);
    expect(received.map(({ index, data }) => ({ index, data }))).toEqual(sent);
    // Decoded on the server's side: its own copies, not the caller's buffers.
    expect(received.every((message, n) => message.data !== sent[n]!.data || message.data.length === 0)).toBe(true);
  });

  it('answers a stream with no messages', async () => {
    expect(await upload(new WatchedSource({ count: 0 }), { requestId: 'all' })).toMatchObject({ chunks: 0, size: 0 });
  });

  it('reads the source only as fast as a slow handler takes it', async () => {
    const count = 160; // 10 MiB
    let mostAhead = 0;
    const source = new WatchedSource({ count, onRead: (pulled) => (mostAhead = Math.max(mostAhead, pulled - consumed)) });
    expect(await upload(source, { requestId: 'slow', deadlineMs: 30_000 })).toEqual(total(count));
    // Unchecked, the caller would read all 160 while the handler took its first few.
    expect(mostAhead).toBeLessThanOrEqual(mostInFlight);
  });

  it('settles with an early answer at once, closing a source still waiting for its next chunk', async () => {
    const source = new WatchedSource({ stallAt: 4 });
    expect(await upload(source, { requestId: 'enough' })).toEqual(total(3, 'enough'));
    await source.closed;
    // The sentinel: a later call's round trip, time enough for a read that should not happen.
    await upload(new WatchedSource({ count: 1 }), { requestId: 'all' });
    expect(source.pulled).toBe(3);
    expect(source.readsAfterClose).toBe(0);
  });

  it('rejects with the DomainError a handler throws before the end, closing the source', async () => {
    const source = new WatchedSource();
    const error = await upload(source, { requestId: 'too-large' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'The upload is over its limit.' });
    await source.closed;
    const pulled = source.pulled;
    await upload(new WatchedSource({ count: 1 }), { requestId: 'all' });
    expect(pulled).toBeLessThanOrEqual(mostInFlight);
    expect(source.pulled).toBe(pulled);
    expect(source.readsAfterClose).toBe(0);
  });

  it('hides an unexpected failure as internal_error', async () => {
    const error = await upload(new WatchedSource({ count: 3 }), { requestId: 'crash' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal_error', message: 'An unexpected error occurred.' });
    expect(String(error)).not.toContain('secret');
  });

  it("cancels the call when the source throws, and rejects with the source's own error", async () => {
    const failure = new Error('the upload broke off');
    async function* source() {
      yield chunk(1);
      // Once the handler is reading: a call cancelled before it reached the server runs no handler.
      await firstRead.promise;
      throw failure;
    }
    await expect(upload(source(), { requestId: 'watch' })).rejects.toBe(failure);
    expect(await seen.promise).toEqual({ read: 1, error: expect.objectContaining({ code: 'service_unavailable', message: 'The call was cancelled.' }), signalAborted: true });
  });

  it('ends the call at its deadline: the handler is aborted, its waiting read rejects, the source is closed', async () => {
    const source = new WatchedSource({ stallAt: 2 });
    const started = Date.now();
    await expect(upload(source, { requestId: 'watch', deadlineMs: 300 })).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await seen.promise).toMatchObject({ read: 1, error: { code: 'service_unavailable' }, signalAborted: true });
    await source.closed;
  });

  it('cancels the call when the signal aborts: the handler is aborted, its waiting read rejects, the source is closed', async () => {
    const source = new WatchedSource({ stallAt: 2 });
    const aborter = new AbortController();
    const result = upload(source, { requestId: 'watch', signal: aborter.signal });
    await firstRead.promise;
    aborter.abort();
    await expect(result).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(await seen.promise).toMatchObject({ read: 1, error: { code: 'service_unavailable' }, signalAborted: true });
    await source.closed;
  });

  it('fails a message that cannot be encoded as the wire would, closing the source', async () => {
    const source = Readable.from([chunk(1), { data: Buffer.alloc(1), index: 'not a number' as unknown as number }, chunk(3)]);
    await expect(upload(source, { requestId: 'all' })).rejects.toMatchObject({ code: 'internal_error' });
    if (!source.destroyed) await once(source, 'close');
  });
});

