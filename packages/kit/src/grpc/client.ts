import type { Span } from '@opentelemetry/api';
import { DomainError } from '../errors.js';
import { callHeaders, type Principal } from './metadata.js';
import { endClientCall, startClientCall } from './observe.js';
import { fromGrpcError, GrpcStatus, isServiceError } from './status.js';
import { pump } from './stream.js';
import { Http2Transport, type ChannelTransport } from './transport.js';
import { callKindOf, type AnyMethod, type CallKindOf, type RequestOf, type ResponseOf, type RpcServiceDefinition } from './types.js';

/** Per-call context a client forwards: who is calling and which request this serves. */
export interface OutgoingCall {
  principal?: Principal;
  requestId?: string;
  /** Overrides the channel's default deadline for this call. */
  deadlineMs?: number;
  /** Streaming calls only: aborting cancels the call at once, even while waiting for a message. */
  signal?: AbortSignal;
}

/**
 * Unary methods return a promise; server-streaming ones an async iterable of the messages;
 * client-streaming ones take an async iterable of the requests and return a promise.
 */
export type PromiseClient<D extends RpcServiceDefinition> = {
  [K in keyof D]: ClientMethod<D[K]>;
};

type ClientMethod<M> = {
  unary: (request: RequestOf<M>, call?: OutgoingCall) => Promise<ResponseOf<M>>;
  serverStream: (request: RequestOf<M>, call?: OutgoingCall) => AsyncIterable<ResponseOf<M>>;
  clientStream: (requests: AsyncIterable<RequestOf<M>>, call?: OutgoingCall) => Promise<ResponseOf<M>>;
}[CallKindOf<M>];

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

  /**
   * A client whose methods reject with DomainError (all but a client stream's source's own error,
   * see `clientStream`). A method that streams both ways throws here, naming it.
   */
  client<D extends RpcServiceDefinition>(definition: D): PromiseClient<D> {
    const methods: Record<string, unknown> = {};
    for (const [name, method] of Object.entries(definition)) methods[name] = this.caller(method);
    return methods as PromiseClient<D>;
  }

  close(): void {
    this.transport.close();
  }

  private caller(method: AnyMethod) {
    switch (callKindOf(method)) {
      case 'unary':
        return (request: unknown, call: OutgoingCall = {}) => this.unary(method, request, call);
      case 'serverStream':
        return (request: unknown, call: OutgoingCall = {}) => this.serverStream(method, request, call);
      case 'clientStream':
        return (requests: AsyncIterable<unknown>, call: OutgoingCall = {}) => this.clientStream(method, requests, call);
    }
  }

  private unary(method: AnyMethod, request: unknown, call: OutgoingCall): Promise<unknown> {
    const { headers, span, deadline } = this.begin(method, call);
    return answerOf(span, this.transport.unary(method, request, headers, deadline));
  }

  /**
   * Sends what `requests` yields, read only as fast as the server takes it, and answers with the
   * server's response. However the call ends before the source does (the server answered or failed
   * early, the deadline passed, the signal aborted), the promise settles at once and the source is
   * closed, not read again. A source that throws cancels the call, and the promise rejects with
   * that error as it is, not wrapped in a DomainError: it is the caller's own failure, which the
   * caller knows how to answer (a DomainError it threw to refuse an upload, a body parser's 413);
   * wrapped, it would become an internal_error.
   */
  private clientStream(method: AnyMethod, requests: AsyncIterable<unknown>, call: OutgoingCall): Promise<unknown> {
    const { headers, span, deadline } = this.begin(method, call);
    const stream = this.transport.clientStream(method, headers, deadline);
    const cancel = () => stream.cancel();
    call.signal?.addEventListener('abort', cancel, { once: true });
    if (call.signal?.aborted) cancel();
    const ended = new AbortController();
    let sourceFailure: { error: unknown } | undefined;
    void pump(requests, stream, ended.signal).then(
      () => {
        if (!ended.signal.aborted) stream.end();
      },
      (error: unknown) => {
        sourceFailure = { error };
        stream.cancel();
      },
    );
    const answer = stream.answer.finally(() => {
      ended.abort();
      call.signal?.removeEventListener('abort', cancel);
    });
    return answerOf(span, answer).catch((error: unknown) => {
      throw sourceFailure ? sourceFailure.error : error;
    });
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
      throw domainErrorOf(error);
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

/** The call's answer, its span ended with the outcome; a failure rejects with its DomainError. */
function answerOf(span: Span, answer: Promise<unknown>): Promise<unknown> {
  return answer.then(
    (response) => {
      endClientCall(span, GrpcStatus.OK);
      return response;
    },
    (error: unknown) => {
      endWithError(span, error);
      throw domainErrorOf(error);
    },
  );
}

function domainErrorOf(error: unknown): DomainError {
  return isServiceError(error) ? fromGrpcError(error) : new DomainError('internal_error', 'An unexpected error occurred.', { cause: error });
}

function endWithError(span: Span, error: unknown): void {
  if (isServiceError(error)) endClientCall(span, error.code, error.details);
  else endClientCall(span, GrpcStatus.UNKNOWN, String(error));
}
