/**
 * A unary call against a server that breaks the protocol: the channel's own call path
 * (Http2Transport) checks the answer as grpc-js's Client does, so a caller gets an error at once,
 * never a hang or a half-read answer.
 */
import { UserServiceService } from '@agent-platform/proto/identity/v1/users';
import { constants, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { GrpcChannel } from './client.js';
import { PrincipalKind } from './metadata.js';

/** What the server answers every call with: these messages (as they are on the wire), then OK. */
let answer: Buffer[] = [];

/** A message as gRPC frames it: not compressed, its length, its bytes. */
function framed(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

const user = Buffer.from(UserServiceService.getCurrentUser.responseSerialize({ id: 'usr_01', email: '', fullName: '', isActive: true, createdAt: new Date(0), tenants: [] }));

let server: Http2Server;
let channel: GrpcChannel;
beforeAll(async () => {
  server = createServer();
  server.on('stream', (stream) => {
    stream.respond({ [constants.HTTP2_HEADER_STATUS]: 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' }));
    for (const message of answer) stream.write(framed(message));
    stream.end();
    // The request is read, so the stream can close.
    stream.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  channel = new GrpcChannel(`127.0.0.1:${(server.address() as AddressInfo).port}`, { defaultDeadlineMs: 5_000 });
});

afterAll(async () => {
  channel.close();
  await new Promise((resolve) => server.close(resolve));
});

const principal = { kind: PrincipalKind.KIND_USER, userId: 'usr_01', apiKeyId: '', tenantId: 'tnt_01', role: 'owner', scopes: [] };

async function failureOf(messages: Buffer[]): Promise<{ code: string; cause: unknown }> {
  answer = messages;
  const failure = await channel.client(UserServiceService).getCurrentUser({}, { principal }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(DomainError);
  return { code: (failure as DomainError).code, cause: (failure as DomainError).cause };
}

describe('a unary call against a server that breaks the protocol', () => {
  it('reads a well-formed answer (the server itself is sound)', async () => {
    answer = [user];
    expect(await channel.client(UserServiceService).getCurrentUser({}, { principal })).toMatchObject({ id: 'usr_01' });
  });

  it.each([
    ['no message before OK', [], /UNIMPLEMENTED: No message received/],
    ['two messages', [user, user], /UNIMPLEMENTED: Too many responses received/],
    ['a message that does not decode', [Buffer.from([0xff, 0xff, 0xff])], /INTERNAL: Response message parsing error/],
  ])('fails with internal_error on %s', async (_case, messages, reason) => {
    const { code, cause } = await failureOf(messages);
    expect(code).toBe('internal_error');
    expect(String(cause)).toMatch(reason);
  });
});
