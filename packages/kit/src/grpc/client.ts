import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { DomainError } from '../errors.js';
import { injectTraceContext, REQUEST_ID_KEY, writePrincipal, type Principal } from './metadata.js';
import { fromGrpcError, isServiceError } from './status.js';
import type { AnyMethod, IsStreaming, RequestOf, ResponseOf, RpcServiceDefinition } from './types.js';

/** Per-call context a client forwards: who is calling and which request this serves. */
export interface OutgoingCall {
  principal?: Principal;
  requestId?: string;
  /** Overrides the channel's default deadline for this call. */
  deadlineMs?: number;
  /** Server streams only: aborting cancels the call at once, even while waiting for a message. */
  signal?: AbortSignal;
}

/** Unary methods return a promise; server-streaming ones an async iterable of the messages. */
export type PromiseClient<D extends RpcServiceDefinition> = {
  [K in keyof D]: IsStreaming<D[K]> extends true
    ? (request: RequestOf<D[K]>, call?: OutgoingCall) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, call?: OutgoingCall) => Promise<ResponseOf<D[K]>>;
};

export interface ChannelOptions {
  /** Every call gets a deadline; this is the default. */
  defaultDeadlineMs?: number;
}

const tracer = trace.getTracer('@agent-platform/kit/grpc');

/** One HTTP/2 channel to a service address, shared by the typed clients made from it. */
export class GrpcChannel {
  private readonly raw: Client;
  private readonly defaultDeadlineMs: number;

  constructor(address: string, options: ChannelOptions = {}) {
    this.raw = new Client(address, credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 30_000,
      'grpc.keepalive_timeout_ms': 10_000,
    });
    this.defaultDeadlineMs = options.defaultDeadlineMs ?? 5_000;
  }

  /** A client whose methods return promises and reject with DomainError. */
  client<D extends RpcServiceDefinition>(definition: D): PromiseClient<D> {
    const methods: Record<string, unknown> = {};
    for (const [name, method] of Object.entries(definition)) {
      methods[name] = method.responseStream
        ? (request: unknown, call: OutgoingCall = {}) => this.serverStream(method, request, call)
        : (request: unknown, call: OutgoingCall = {}) => this.unary(method, request, call);
    }
    return methods as PromiseClient<D>;
  }

  close(): void {
    this.raw.close();
  }

  private unary(method: AnyMethod, request: unknown, call: OutgoingCall): Promise<unknown> {
    const { metadata, span, deadline } = this.begin(method, call);
    return new Promise((resolve, reject) => {
      this.raw.makeUnaryRequest(
        method.path,
        (value: unknown) => method.requestSerialize(value as never),
        method.responseDeserialize,
        request,
        metadata,
        { deadline },
        (error: ServiceError | null, response?: unknown) => {
          if (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: error.details });
            span.end();
            reject(isServiceError(error) ? fromGrpcError(error) : new DomainError('internal_error', 'An unexpected error occurred.', { cause: error }));
            return;
          }
          span.end();
          resolve(response);
        },
      );
    });
  }

  /**
   * The messages of a server stream as they arrive; a failure status rejects the iteration with its
   * DomainError. Leaving the loop early cancels the call, so the server stops working for nobody.
   */
  private async *serverStream(method: AnyMethod, request: unknown, call: OutgoingCall): AsyncGenerator<unknown, void, undefined> {
    const { metadata, span, deadline } = this.begin(method, call);
    const stream = this.raw.makeServerStreamRequest(
      method.path,
      (value: unknown) => method.requestSerialize(value as never),
      method.responseDeserialize,
      request,
      metadata,
      { deadline },
    );
    let finished = false;
    const cancel = () => stream.cancel();
    call.signal?.addEventListener('abort', cancel, { once: true });
    if (call.signal?.aborted) cancel();
    try {
      for await (const message of stream as AsyncIterable<unknown>) yield message;
      finished = true;
      span.end();
    } catch (error) {
      finished = true;
      span.setStatus({ code: SpanStatusCode.ERROR, message: isServiceError(error) ? error.details : String(error) });
      span.end();
      throw isServiceError(error) ? fromGrpcError(error) : new DomainError('internal_error', 'An unexpected error occurred.', { cause: error });
    } finally {
      call.signal?.removeEventListener('abort', cancel);
      if (!finished) {
        stream.cancel();
        span.end();
      }
    }
  }

  private begin(method: AnyMethod, call: OutgoingCall) {
    const metadata = new Metadata();
    if (call.principal) writePrincipal(metadata, call.principal);
    if (call.requestId) metadata.set(REQUEST_ID_KEY, call.requestId);
    const span = tracer.startSpan(method.path, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.method': method.path } });
    injectTraceContext(metadata, trace.setSpan(context.active(), span));
    const deadline = new Date(Date.now() + (call.deadlineMs ?? this.defaultDeadlineMs));
    return { metadata, span, deadline };
  }
}
