import type { Span } from '@opentelemetry/api';
import { DomainError } from '../errors.js';
import { callHeaders, type Principal } from './metadata.js';
import { endClientCall, startClientCall } from './observe.js';
import { fromGrpcError, GrpcStatus, isServiceError } from './status.js';
import { Http2Transport, type ChannelTransport } from './transport.js';
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

/**
 * One channel to a service, shared by the typed clients made from it: HTTP/2 to an address, or a
 * transport into a server of this process (the all-in-one mode's choice, made once at start).
 */
export class GrpcChannel {
  private readonly transport: ChannelTransport;
  private readonly defaultDeadlineMs: number;

  constructor(target: string | ChannelTransport, options: ChannelOptions = {}) {
    this.transport = typeof target === 'string' ? new Http2Transport(target) : target;
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
    this.transport.close();
  }

  private unary(method: AnyMethod, request: unknown, call: OutgoingCall): Promise<unknown> {
    const { headers, span, deadline } = this.begin(method, call);
    return this.transport.unary(method, request, headers, deadline).then(
      (response) => {
        endClientCall(span, GrpcStatus.OK);
        return response;
      },
      (error: unknown) => {
        endWithError(span, error);
        throw isServiceError(error) ? fromGrpcError(error) : new DomainError('internal_error', 'An unexpected error occurred.', { cause: error });
      },
    );
  }

  /**
   * The messages of a server stream as they arrive; a failure status rejects the iteration with its
   * DomainError. Leaving the loop early cancels the call, so the server stops working for nobody.
   */
  private async *serverStream(method: AnyMethod, request: unknown, call: OutgoingCall): AsyncGenerator<unknown, void, undefined> {
    const { headers, span, deadline } = this.begin(method, call);
    const stream = this.transport.serverStream(method, request, headers, deadline);
    let finished = false;
    const cancel = () => stream.cancel();
    call.signal?.addEventListener('abort', cancel, { once: true });
    if (call.signal?.aborted) cancel();
    try {
      for await (const message of stream) yield message;
      finished = true;
      endClientCall(span, GrpcStatus.OK);
    } catch (error) {
      finished = true;
      endWithError(span, error);
      throw isServiceError(error) ? fromGrpcError(error) : new DomainError('internal_error', 'An unexpected error occurred.', { cause: error });
    } finally {
      call.signal?.removeEventListener('abort', cancel);
      if (!finished) {
        stream.cancel();
        endClientCall(span, GrpcStatus.CANCELLED);
      }
    }
  }

  private begin(method: AnyMethod, call: OutgoingCall) {
    const { span, ctx } = startClientCall(method.path);
    const headers = callHeaders(call.principal, call.requestId, ctx);
    const deadline = new Date(Date.now() + (call.deadlineMs ?? this.defaultDeadlineMs));
    return { headers, span, deadline };
  }
}

function endWithError(span: Span, error: unknown): void {
  if (isServiceError(error)) endClientCall(span, error.code, error.details);
  else endClientCall(span, GrpcStatus.UNKNOWN, String(error));
}
