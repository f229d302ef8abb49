import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_SERVICE, UploadChunk, UploadServiceService } from '../../test/support/upload-service.js';
import { createLogger } from '../logger.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { GrpcServer } from './server.js';
import { sendingBytesUncopied, wholeMessage } from './uncopied-bytes.js';

const principal: Principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };
/** The test service's chunks with their `data` (field 1) sent uncopied. */
const Uncopied = sendingBytesUncopied(UploadServiceService, 'upload', { name: 'data', number: 1 });
const TRAILING_BYTES = Symbol.for('agent-platform.grpc.trailingBytes');
/** The bytes grpc-js is to write after a serialized message's own. */
const trailingOf = (serialized: Buffer): Uint8Array | undefined => (serialized as Buffer & { [TRAILING_BYTES]?: Uint8Array })[TRAILING_BYTES];

/** Pieces of every size around the threshold, each of its own bytes, with an index beside them. */
const pieces: UploadChunk[] = [64 * 1024, 10, 0, 16 * 1024, 16 * 1024 - 1, 300_000, 64 * 1024].map((size, index) => ({
  data: Buffer.from(Array.from({ length: size }, (_, offset) => (offset * 7 + index) % 251)),
  index: index + 1,
}));

let received: UploadChunk[] = [];
const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) }).add(UPLOAD_SERVICE, UploadServiceService, {
  upload: async (requests) => {
    received = [];
    for await (const message of requests) received.push(message);
    return { size: received.reduce((sum, { data }) => sum + data.length, 0), chunks: received.length, note: '' };
  },
});
let address: string;

beforeAll(async () => {
  address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});
afterAll(async () => {
  await server.stop(1_000);
});

describe('sendingBytesUncopied', () => {
  it('serializes a large piece as the message before it, its bytes left where they are; whole, it decodes as the original', () => {
    const serialize = Uncopied.upload.requestSerialize;
    const [large] = pieces;
    const head = serialize(large!);
    expect(head.length).toBeLessThan(16);
    // The very bytes the caller holds: not a copy of them.
    expect(trailingOf(head)).toBe(large!.data);
    expect(UploadChunk.decode(wholeMessage(head))).toEqual(large);

    const small = pieces[1]!;
    expect(trailingOf(serialize(small))).toBeUndefined();
    expect(UploadChunk.decode(serialize(small))).toEqual(small);
  });

  it.each([
    { transport: 'HTTP/2', open: () => new GrpcChannel(address, { defaultDeadlineMs: 5_000 }) },
    { transport: 'the in-process transport', open: () => new GrpcChannel(server.inProcess(), { defaultDeadlineMs: 5_000 }) },
  ])('delivers every piece whole and in order over $transport', async ({ open }) => {
    const channel = open();
    try {
      const answer = await channel.client(Uncopied).upload(Readable.from(pieces), { principal, requestId: 'uncopied' });
      expect(answer).toMatchObject({ chunks: pieces.length, size: pieces.reduce((sum, { data }) => sum + data.length, 0) });
      expect(received).toEqual(pieces);
    } finally {
      channel.close();
    }
  });
});
