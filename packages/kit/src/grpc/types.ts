/** Type plumbing over ts-proto's grpc-js service definitions (`XServiceService`). */

// `never`/`unknown` here keep any concrete definition assignable (parameter contravariance).
interface MethodCodec {
  path: string;
  requestSerialize: (value: never) => Buffer;
  requestDeserialize: (value: Buffer) => unknown;
  responseSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

/**
 * A unary, server-streaming or client-streaming method. Nothing in the platform streams both
 * ways, so a bidirectional definition is not one: it does not type-check as a service
 * definition, and `callKindOf` refuses it at run time.
 */
export type AnyMethod = MethodCodec & ({ requestStream: false; responseStream: boolean } | { requestStream: true; responseStream: false });

export type RpcServiceDefinition = Record<string, AnyMethod>;

export type RequestOf<M> = M extends { requestDeserialize: (value: Buffer) => infer R } ? R : never;
export type ResponseOf<M> = M extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** How a method's messages travel: one each way, a stream of answers, or a stream of requests. */
export type CallKind = 'unary' | 'serverStream' | 'clientStream';

/** A method's CallKind, as `callKindOf` tells it at run time. */
export type CallKindOf<M> = M extends { requestStream: true } ? 'clientStream' : M extends { responseStream: true } ? 'serverStream' : 'unary';

/**
 * A method's CallKind. A definition that streams both ways (cast past the types, or built by hand)
 * throws, naming the method, when a client or server is made from it rather than at its first call.
 */
export function callKindOf(method: { path: string; requestStream: boolean; responseStream: boolean }): CallKind {
  if (method.requestStream && method.responseStream) {
    throw new Error(`${method.path} streams both ways; the kit supports unary, server-streaming and client-streaming methods only.`);
  }
  if (method.requestStream) return 'clientStream';
  return method.responseStream ? 'serverStream' : 'unary';
}
