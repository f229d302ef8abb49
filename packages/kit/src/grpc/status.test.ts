import { BadRequest, ErrorInfo, RetryInfo } from '@agent-platform/proto/google/rpc/error-details';
import { Status } from '@agent-platform/proto/google/rpc/status';
import { MemberServiceService } from '@agent-platform/proto/identity/v1/users';
import { Client, credentials, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { createLogger } from '../logger.js';
import { GrpcServer } from './server.js';
import { fromGrpcError, toGrpcStatus } from './status.js';

const validation = DomainError.validation([
  { field: 'role', message: 'Unknown role.' },
  { field: 'nodes[2].config.path', message: 'Required.' },
]);
const rateLimited = new DomainError('rate_limit_exceeded', 'Slow down.', { retryAfter: 7 });

/** What a failed call carries to the client: the status with its trailers. */
function asServiceError(error: DomainError): ServiceError {
  const status = toGrpcStatus(error);
  return Object.assign(new Error(status.details), { code: status.code!, details: status.details!, metadata: status.metadata! });
}

describe('toGrpcStatus and fromGrpcError', () => {
  it.each([
    ['field violations', validation],
    ['a retry delay', rateLimited],
    ['a retry delay of zero and a fraction', new DomainError('rate_limit_exceeded', 'Now.', { retryAfter: 0.25 })],
    ['no details', DomainError.notFound('Agent agt_01')],
  ])('round-trips a DomainError with %s exactly', (_case, error) => {
    const decoded = fromGrpcError(asServiceError(error));
    expect(decoded).toBeInstanceOf(DomainError);
    expect({ code: decoded.code, message: decoded.message, details: decoded.details, retryAfter: decoded.retryAfter }).toEqual({
      code: error.code,
      message: error.message,
      details: error.details,
      retryAfter: error.retryAfter,
    });
  });

  it('answers a transport-level code for a google.rpc.Status of another domain, or one that does not parse', () => {
    const foreign = Status.encode({
      code: GrpcStatus.NOT_FOUND,
      message: 'Topic not found.',
      details: [{ typeUrl: 'type.googleapis.com/google.rpc.ErrorInfo', value: Buffer.from(ErrorInfo.encode({ reason: 'NOT_FOUND', domain: 'pubsub.googleapis.com', metadata: {} }).finish()) }],
    }).finish();
    for (const trailer of [Buffer.from(foreign), Buffer.from([0xff, 0xff, 0xff])]) {
      const metadata = new Metadata();
      metadata.set('grpc-status-details-bin', trailer);
      const error = Object.assign(new Error('5 NOT_FOUND'), { code: GrpcStatus.NOT_FOUND, details: 'x', metadata });
      expect(fromGrpcError(error)).toMatchObject({ code: 'not_found', message: 'An unexpected error occurred.', details: [] });
    }
  });
});

describe('grpc-status-details-bin over HTTP/2', () => {
  const server = new GrpcServer({ logger: createLogger({ service: 'kit-test', level: 'silent' }) }).add('agentplatform.identity.v1.MemberService', MemberServiceService, {
    listMembers: () => Promise.reject(validation),
    addMember: () => Promise.reject(new Error('unexpected')),
    updateMember: () => Promise.reject(new Error('unexpected')),
    removeMember: () => Promise.reject(rateLimited),
  });
  let client: Client;
  beforeAll(async () => {
    client = new Client(`127.0.0.1:${await server.listen('127.0.0.1', 0)}`, credentials.createInsecure());
  });
  afterAll(async () => {
    client.close();
    await server.stop(1_000);
  });

  /** A plain grpc-js call: the error as any gRPC client receives it, with no kit code decoding it. */
  function failure(method: 'listMembers' | 'removeMember'): Promise<ServiceError> {
    const { path, requestSerialize, responseDeserialize } = MemberServiceService[method];
    return new Promise((resolve, reject) =>
      client.makeUnaryRequest(path, (value: object) => requestSerialize(value as never), responseDeserialize, {}, (error) =>
        error ? resolve(error) : reject(new Error('the call succeeded')),
      ),
    );
  }

  /** The trailer read with the generated google.rpc types alone, as another language would. */
  function richStatus(error: ServiceError) {
    const [raw] = error.metadata.get('grpc-status-details-bin');
    expect(raw).toBeInstanceOf(Buffer);
    const status = Status.decode(raw as Buffer);
    const detail = <T>(type: string, codec: { decode(input: Uint8Array): T }) => {
      const any = status.details.find((d) => d.typeUrl === `type.googleapis.com/google.rpc.${type}`);
      return any && codec.decode(any.value);
    };
    return {
      status,
      errorInfo: detail('ErrorInfo', ErrorInfo),
      badRequest: detail('BadRequest', BadRequest),
      retryInfo: detail('RetryInfo', RetryInfo),
    };
  }

  it('carries a google.rpc.Status with ErrorInfo and BadRequest field violations', async () => {
    const error = await failure('listMembers');
    const { status, errorInfo, badRequest, retryInfo } = richStatus(error);
    expect(error.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(status).toMatchObject({ code: GrpcStatus.INVALID_ARGUMENT, message: 'The request did not pass validation.' });
    expect(errorInfo).toEqual({ reason: 'VALIDATION_ERROR', domain: 'agentplatform', metadata: {} });
    expect(badRequest?.fieldViolations).toEqual([
      { field: 'role', description: 'Unknown role.', reason: '', localizedMessage: undefined },
      { field: 'nodes[2].config.path', description: 'Required.', reason: '', localizedMessage: undefined },
    ]);
    expect(retryInfo).toBeUndefined();
    expect(error.metadata.get('x-error-bin')).toEqual([]);
  });

  it('carries RetryInfo when the error says when to retry', async () => {
    const error = await failure('removeMember');
    const { status, errorInfo, badRequest, retryInfo } = richStatus(error);
    expect(status).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED, message: 'Slow down.' });
    expect(errorInfo).toMatchObject({ reason: 'RATE_LIMIT_EXCEEDED', domain: 'agentplatform' });
    expect(retryInfo).toEqual({ retryDelay: { seconds: 7, nanos: 0 } });
    expect(badRequest).toBeUndefined();
  });
});
