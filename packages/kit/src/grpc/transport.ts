import { Client, credentials, type ServiceError } from '@grpc/grpc-js';
import { toMetadata, type CallHeaders } from './metadata.js';
import { patchedByInstrumentation } from './observe.js';
import type { AnyMethod } from './types.js';

/** A server stream as a channel reads it: the messages in order, and a way to stop early. */
export interface CallStream extends AsyncIterable<unknown> {
  cancel(): void;
}

/**
 * How a channel's calls reach their server: over HTTP/2 to an address, or straight into a
 * GrpcServer of the same process (`GrpcServer.inProcess()`). Either way the request and the answer
 * are protobuf-encoded and decoded, and a failure rejects with a grpc-js ServiceError, so
 * everything above a transport (deadlines, tracing, error mapping) is the same code. The call's
 * headers become metadata only where they cross a network.
 */
export interface ChannelTransport {
  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown>;
  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream;
  close(): void;
  /** True when OpenTelemetry's gRPC instrumentation already makes each call's CLIENT span. */
  readonly tracedByInstrumentation: boolean;
}

/** A service whose gRPC calls other parts of this process make without the network. */
export interface InProcessServing {
  /** The all-in-one mode's transport to this service (`GrpcServer.inProcess()`). */
  readonly inProcess: ChannelTransport;
}

/** A grpc-js client over one HTTP/2 connection: the distributed mode. */
export class Http2Transport implements ChannelTransport {
  readonly tracedByInstrumentation = patchedByInstrumentation(Client.prototype, 'makeUnaryRequest');
  private readonly client: Client;

  constructor(address: string) {
    this.client = new Client(address, credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
    });
  }

  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown> {
    const { path, serialize, deserialize } = codecOf(method);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(path, serialize, deserialize, request, toMetadata(headers), { deadline }, (error: ServiceError | null, response?: unknown) =>
        error ? reject(error) : resolve(response),
      );
    });
  }

  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream {
    const { path, serialize, deserialize } = codecOf(method);
    return this.client.makeServerStreamRequest(path, serialize, deserialize, request, toMetadata(headers), { deadline });
  }

  close(): void {
    this.client.close();
  }
}

function codecOf(method: AnyMethod) {
  return { path: method.path, serialize: (value: unknown) => method.requestSerialize(value as never), deserialize: method.responseDeserialize };
}
