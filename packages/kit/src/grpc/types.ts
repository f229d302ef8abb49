/** Type plumbing over ts-proto's grpc-js service definitions (`XServiceService`). */

export interface UnaryMethodDefinition<Request, Response> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize: (value: Request) => Buffer;
  requestDeserialize: (value: Buffer) => Request;
  responseSerialize: (value: Response) => Buffer;
  responseDeserialize: (value: Buffer) => Response;
}

// `never`/`unknown` here keep any concrete definition assignable (parameter contravariance).
export interface AnyUnaryMethod {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize: (value: never) => Buffer;
  requestDeserialize: (value: Buffer) => unknown;
  responseSerialize: (value: never) => Buffer;
  responseDeserialize: (value: Buffer) => unknown;
}

export type UnaryServiceDefinition = Record<string, AnyUnaryMethod>;

export type RequestOf<M> = M extends { requestDeserialize: (value: Buffer) => infer R } ? R : never;
export type ResponseOf<M> = M extends { responseDeserialize: (value: Buffer) => infer R } ? R : never;
