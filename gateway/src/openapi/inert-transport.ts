import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { answeredRequestStream, type CallStream, type ChannelTransport, type RequestStream } from '@agent-platform/kit/grpc';

function unavailable(): ServiceError {
  return Object.assign(new Error('inert transport: no backend'), { code: status.UNAVAILABLE, details: 'inert transport: no backend', metadata: new Metadata() });
}

/**
 * A transport to no backend: every call fails `unavailable`. Building the gateway over it opens no
 * connection, which is all the OpenAPI document needs (its routes, never their handlers).
 */
export class InertTransport implements ChannelTransport {

  unary(): Promise<unknown> {
    return Promise.reject(unavailable());
  }

  serverStream(): CallStream {
    return {
      cancel() {},
      [Symbol.asyncIterator]() {
        return { next: () => Promise.reject(unavailable()) };
      },
    };
  }

  clientStream(): RequestStream {
    return answeredRequestStream(Promise.reject(unavailable()));
  }

  close(): void {}
}
