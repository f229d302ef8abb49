import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { AsyncResource } from 'node:async_hooks';
import type { CallHeaders } from './metadata.js';
import { CALL_CANCELLED } from './status.js';
import type { CallStream, ChannelTransport } from './transport.js';
import type { AnyMethod } from './types.js';

/** How a call ended, whichever transport carried it. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: Partial<StatusObject> };

/** Where a server stream writes: `write` answers a promise when the reader is behind. */
export interface MessageSink {
  write(message: unknown): Promise<void> | undefined;
  readonly cancelled: boolean;
}

export type UnaryRun = (request: unknown, headers: CallHeaders, signal: AbortSignal) => Promise<Outcome<unknown>>;
export type StreamRun = (request: unknown, headers: CallHeaders, signal: AbortSignal, sink: MessageSink) => Promise<Outcome<undefined>>;

interface LocalMethod {
  /** The server's own definition: its decoder reads what the caller's encoder wrote. */
  definition: AnyMethod;
  unary?: UnaryRun;
  stream?: StreamRun;
}

// Messages a server stream may run ahead of its reader, as HTTP/2 flow control would allow.
const STREAM_HIGH_WATER = 16;

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

  register(definition: AnyMethod, run: { unary: UnaryRun } | { stream: StreamRun }): void {
    this.methods.set(definition.path, { definition, ...run });
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
    const target = this.resolve(method, 'unary', request);
    if (!target.ok) return Promise.reject(serviceError(target.status));
    const { definition, run, decoded } = target.value;
    return new Promise((resolve, reject) => {
      const aborter = new AbortController();
      const end = (error: ServiceError) => {
        aborter.abort(CALL_CANCELLED);
        reject(error);
      };
      const timer = setTimeout(() => end(serviceError(DEADLINE_EXCEEDED)), msUntil(deadline));
      const done = this.serverScope.runInAsyncScope(run, undefined, decoded, headers, aborter.signal).then((outcome) => {
        clearTimeout(timer);
        const answer = outcome.ok ? crossWire(() => method.responseDeserialize(definition.responseSerialize(outcome.value as never))) : outcome;
        if (answer.ok) resolve(answer.value);
        else reject(serviceError(answer.status));
      });
      this.track(done, () => {
        clearTimeout(timer);
        end(serviceError(CUT));
      });
    });
  }

  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream {
    const aborter = new AbortController();
    const queue = new MessageQueue(() => {
      aborter.abort(CALL_CANCELLED);
      queue.fail(serviceError(CANCELLED_BY_CLIENT));
    });
    const target = this.resolve(method, 'stream', request);
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
        const answer = crossWire(() => method.responseDeserialize(definition.responseSerialize(message as never)));
        if (answer.ok) return queue.push(answer.value);
        end(serviceError(answer.status));
        return undefined;
      },
      get cancelled() {
        return aborter.signal.aborted;
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

  /** The method to run and the request as the server decodes it, or the status that refuses the call. */
  private resolve<K extends 'unary' | 'stream'>(
    method: AnyMethod,
    kind: K,
    request: unknown,
  ): Outcome<{ definition: AnyMethod; run: NonNullable<LocalMethod[K]>; decoded: unknown }> {
    if (!this.accepting) return { ok: false, status: NOT_ACCEPTING };
    const local = this.methods.get(method.path);
    const run = local?.[kind];
    if (!local || !run) return { ok: false, status: { code: GrpcStatus.UNIMPLEMENTED, details: `The server does not implement ${method.path}.` } };
    // The same bytes as on the wire, so nothing passes here that the network would not carry.
    const decoded = crossWire(() => local.definition.requestDeserialize(method.requestSerialize(request as never)));
    if (!decoded.ok) return decoded;
    return { ok: true, value: { definition: local.definition, run, decoded: decoded.value } };
  }

  private track(done: Promise<void>, cut: () => void): void {
    this.running.set(done, cut);
    void done.finally(() => this.running.delete(done));
  }
}

/** A server stream's messages between the handler writing them and the caller reading them. */
class MessageQueue implements CallStream {
  private readonly messages: unknown[] = [];
  private finished = false;
  private failure: ServiceError | undefined;
  private wakeReader: (() => void) | undefined;
  private wakeWriter: (() => void) | undefined;
  private readonly onCancel: () => void;

  constructor(onCancel: () => void) {
    this.onCancel = onCancel;
  }

  /** Undefined while the reader keeps up; otherwise resolves once it has caught up or the call ended. */
  push(message: unknown): Promise<void> | undefined {
    if (this.finished) return undefined;
    this.messages.push(message);
    this.wake();
    if (this.messages.length < STREAM_HIGH_WATER) return undefined;
    return new Promise((resolve) => (this.wakeWriter = resolve));
  }

  end(): void {
    this.finished = true;
    this.wake();
  }

  /** Messages already written are still read; then the iteration throws `error`. */
  fail(error: ServiceError): void {
    if (this.finished) return;
    this.failure = error;
    this.end();
  }

  cancel(): void {
    if (!this.finished) this.onCancel();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown, void, undefined> {
    for (;;) {
      if (this.messages.length > 0) {
        const message = this.messages.shift();
        if (this.messages.length < STREAM_HIGH_WATER) this.releaseWriter();
        yield message;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }

  private wake(): void {
    const wake = this.wakeReader;
    this.wakeReader = undefined;
    wake?.();
    if (this.finished) this.releaseWriter();
  }

  private releaseWriter(): void {
    const release = this.wakeWriter;
    this.wakeWriter = undefined;
    release?.();
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

function msUntil(deadline: Date): number {
  return Math.max(0, deadline.getTime() - Date.now());
}
