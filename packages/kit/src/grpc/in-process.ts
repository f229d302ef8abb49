import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AsyncResource } from 'node:async_hooks';
import type { CallHeaders } from './metadata.js';
import { MessageQueue } from './message-queue.js';
import { CALL_CANCELLED } from './status.js';
import type { MessageSink } from './stream.js';
import { answeredRequestStream, type CallStream, type ChannelTransport, type RequestStream } from './transport.js';
import type { AnyMethod, CallKind } from './types.js';
import { wholeMessage } from './uncopied-bytes.js';

/** How a call ended, whichever transport carried it. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: Partial<StatusObject> };

export type UnaryRun = (request: unknown, headers: CallHeaders, signal: AbortSignal) => Promise<Outcome<unknown>>;
export type ServerStreamRun = (request: unknown, headers: CallHeaders, signal: AbortSignal, sink: MessageSink) => Promise<Outcome<undefined>>;
export type ClientStreamRun = (requests: AsyncIterable<unknown>, headers: CallHeaders, signal: AbortSignal) => Promise<Outcome<unknown>>;

/** How a server runs a call of each kind, whichever transport brought it. */
interface Runs {
  unary: UnaryRun;
  serverStream: ServerStreamRun;
  clientStream: ClientStreamRun;
}

/** A method's run under the name of its kind: `{ unary: run }`, `{ clientStream: run }`, … */
export type MethodRun = { [K in CallKind]: Pick<Runs, K> }[CallKind];

interface LocalMethod {
  /** The server's own definition: its decoder reads what the caller's encoder wrote. */
  definition: AnyMethod;
  runs: Partial<Runs>;
}

/**
 * The calls a GrpcServer takes from its own process. A call still crosses the protobuf boundary
 * both ways and runs through the server's handlers, tracing, deadlines and error mapping; only the
 * HTTP/2 connection, its framing, four socket operations per call and the headers' metadata
 * encoding are gone. A server takes
 * calls here while it listens, as it does on its port; stopping drains them like network calls.
 */
export class InProcessCalls implements ChannelTransport {
  private readonly methods = new Map<string, LocalMethod>();
  /** Each running call, with what cuts it when a drain runs out of time. */
  private readonly running = new Map<Promise<void>, () => void>();
  private accepting = false;
  /**
   * The async context calls run in: the one the server started listening in, as for a call off its
   * socket. Without it a handler would inherit the caller's (its MikroORM transaction context, say).
   */
  private serverScope = new AsyncResource('InProcessCalls');

  register(definition: AnyMethod, run: MethodRun): void {
    this.methods.set(definition.path, { definition, runs: run });
  }

  open(): void {
    this.serverScope = new AsyncResource('InProcessCalls');
    this.accepting = true;
  }

  /** Refuses new calls and resolves once the running ones have ended. */
  async drain(): Promise<void> {
    this.accepting = false;
    await Promise.all(this.running.keys());
  }

  /** Ends every running call at once: the callers get `unavailable`, as on a cut connection. */
  cutAll(): void {
    for (const cut of this.running.values()) cut();
  }

  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown> {
    const target = this.resolveWithRequest(method, 'unary', request);
    if (!target.ok) return Promise.reject(serviceError(target.status));
    const { definition, run, decoded } = target.value;
    return this.answered(method, definition, deadline, (signal) => run(decoded, headers, signal)).answer;
  }

  /**
   * The requests go through a queue the handler reads, each crossing protobuf as it is written;
   * a full queue makes the writer wait, as HTTP/2 flow control would.
   */
  clientStream(method: AnyMethod, headers: CallHeaders, deadline: Date): RequestStream {
    const target = this.resolve(method, 'clientStream');
    if (!target.ok) return answeredRequestStream(Promise.reject(serviceError(target.status)));
    const { definition, run } = target.value;
    // A handler that has read enough just stops reading; only the caller cancels.
    const requests = new MessageQueue(() => undefined);
    const call = this.answered(method, definition, deadline, (signal) => run(requests, headers, signal));
    // The call ends first: the handler's waiting read rejects with the cancellation, not this error.
    const end = (error: ServiceError) => {
      call.end(error);
      requests.fail(error);
    };
    return {
      write: (message) => {
        const decoded = crossRequest(method, definition, message);
        if (decoded.ok) return requests.push(decoded.value);
        end(serviceError(decoded.status));
        return undefined;
      },
      end: () => requests.end(),
      cancel: () => end(serviceError(CANCELLED_BY_CLIENT)),
      answer: call.answer,
    };
  }

  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream {
    const aborter = new AbortController();
    const queue = new MessageQueue(() => {
      aborter.abort(CALL_CANCELLED);
      queue.fail(serviceError(CANCELLED_BY_CLIENT));
    });
    const target = this.resolveWithRequest(method, 'serverStream', request);
    if (!target.ok) {
      queue.fail(serviceError(target.status));
      return queue;
    }
    const { definition, run, decoded } = target.value;
    const end = (error: ServiceError) => {
      aborter.abort(CALL_CANCELLED);
      queue.fail(error);
    };
    const timer = setTimeout(() => end(serviceError(DEADLINE_EXCEEDED)), msUntil(deadline));
    const sink: MessageSink = {
      write: (message) => {
        const answer = crossResponse(method, definition, message);
        if (answer.ok) return queue.push(answer.value);
        end(serviceError(answer.status));
        return undefined;
      },
    };
    const done = this.serverScope.runInAsyncScope(run, undefined, decoded, headers, aborter.signal, sink).then((outcome) => {
      clearTimeout(timer);
      if (outcome.ok) queue.end();
      else queue.fail(serviceError(outcome.status));
    });
    this.track(done, () => {
      clearTimeout(timer);
      end(serviceError(CUT));
    });
    return queue;
  }

  /** The channel does not own the server: closing it leaves the server serving its other callers. */
  close(): void {}

  /** The method to run for a call of this kind, or the status that refuses the call. */
  private resolve<K extends CallKind>(method: AnyMethod, kind: K): Outcome<{ definition: AnyMethod; run: Runs[K] }> {
    if (!this.accepting) return { ok: false, status: NOT_ACCEPTING };
    const local = this.methods.get(method.path);
    const run = local?.runs[kind];
    if (!local || !run) return { ok: false, status: { code: GrpcStatus.UNIMPLEMENTED, details: `The server does not implement ${method.path}.` } };
    return { ok: true, value: { definition: local.definition, run } };
  }

  /** For a call with one request: its method to run and the request as the server decodes it. */
  private resolveWithRequest<K extends 'unary' | 'serverStream'>(
    method: AnyMethod,
    kind: K,
    request: unknown,
  ): Outcome<{ definition: AnyMethod; run: Runs[K]; decoded: unknown }> {
    const target = this.resolve(method, kind);
    if (!target.ok) return target;
    const decoded = crossRequest(method, target.value.definition, request);
    if (!decoded.ok) return decoded;
    return { ok: true, value: { ...target.value, decoded: decoded.value } };
  }

  /**
   * Runs a call the server answers with one message (unary or client-streaming) in the server's
   * scope; the answer crosses protobuf back to the caller. The deadline, a cut, or `end` settles
   * the call at once with their error and aborts the handler, which the drain still waits for.
   */
  private answered(
    method: AnyMethod,
    definition: AnyMethod,
    deadline: Date,
    start: (signal: AbortSignal) => Promise<Outcome<unknown>>,
  ): { answer: Promise<unknown>; end(error: ServiceError): void } {
    const aborter = new AbortController();
    const { promise: answer, resolve, reject } = Promise.withResolvers<unknown>();
    const end = (error: ServiceError) => {
      clearTimeout(timer);
      aborter.abort(CALL_CANCELLED);
      reject(error);
    };
    const timer = setTimeout(() => end(serviceError(DEADLINE_EXCEEDED)), msUntil(deadline));
    const done = this.serverScope.runInAsyncScope(start, undefined, aborter.signal).then((outcome) => {
      clearTimeout(timer);
      const reply = outcome.ok ? crossResponse(method, definition, outcome.value) : outcome;
      if (reply.ok) resolve(reply.value);
      else reject(serviceError(reply.status));
    });
    this.track(done, () => end(serviceError(CUT)));
    return { answer, end };
  }

  private track(done: Promise<void>, cut: () => void): void {
    this.running.set(done, cut);
    void done.finally(() => this.running.delete(done));
  }
}

// The statuses grpc-js gives a client in the same situations, so callers map them the same way.
const NOT_ACCEPTING = { code: GrpcStatus.UNAVAILABLE, details: 'The server is not serving.' };
const CUT = { code: GrpcStatus.UNAVAILABLE, details: 'The server stopped during the call.' };
const DEADLINE_EXCEEDED = { code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' };
const CANCELLED_BY_CLIENT = { code: GrpcStatus.CANCELLED, details: 'Cancelled on client' };

function serviceError(status: Partial<StatusObject>): ServiceError {
  const code = status.code ?? GrpcStatus.UNKNOWN;
  const details = status.details ?? '';
  return Object.assign(new Error(`${code} ${GrpcStatus[code]}: ${details}`), { code, details, metadata: status.metadata ?? new Metadata() });
}

/** An encode-decode pair; a message that cannot cross fails the call as it would on the wire. */
function crossWire<T>(convert: () => T): Outcome<T> {
  try {
    return { ok: true, value: convert() };
  } catch (error) {
    return { ok: false, status: { code: GrpcStatus.INTERNAL, details: `A message could not be serialized: ${String(error)}` } };
  }
}

/** The same bytes as on the wire, so nothing passes here that the network would not carry. */
function crossRequest(method: AnyMethod, definition: AnyMethod, request: unknown): Outcome<unknown> {
  return crossWire(() => definition.requestDeserialize(wholeMessage(method.requestSerialize(request as never))));
}

function crossResponse(method: AnyMethod, definition: AnyMethod, response: unknown): Outcome<unknown> {
  return crossWire(() => method.responseDeserialize(definition.responseSerialize(response as never)));
}

function msUntil(deadline: Date): number {
  return Math.max(0, deadline.getTime() - Date.now());
}
