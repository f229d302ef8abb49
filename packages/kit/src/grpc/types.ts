/** Type plumbing over ts-proto's grpc-js service definitions (`XServiceService`). */

// `never`/`unknown` here keep any concrete definition assignable (parameter contravariance).
// Unary and server-streaming methods; nothing in the platform streams requests.
export interface AnyMethod {
  path: string;
  requestStream: false;
  responseStream: boolean;
  requestSerialize: (value: never) => Buffer;
  requestDeserialize: (value: Buffer) => unknown;
  responseSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

export type RpcServiceDefinition = Record<string, AnyMethod>;

export type RequestOf<M> = M extends { requestDeserialize: (value: Buffer) => infer R } ? R : never;
export type ResponseOf<M> = M extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;

/** True for a method whose answer is a stream of messages. */
export type IsStreaming<M> = M extends { responseStream: true } ? true : false;
