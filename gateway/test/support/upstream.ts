import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { DomainError } from '@agent-platform/kit';
import { answeredRequestStream, toGrpcStatus, type AnyMethod, type CallHeaders, type CallStream, type ChannelTransport, type Principal, type RequestStream } from '@agent-platform/kit/grpc';

/** One call the gateway made to a service, as the service received it. */
export interface RecordedCall {
  /** `/agentplatform.identity.v1.AuthService/Login` */
  path: string;
  /** The method name alone, `Login`. */
  method: string;
  request: unknown;
  /** The principal the gateway forwarded, as the service reads it. */
  principal: Principal | undefined;
  /** The call's `x-request-id`. */
  requestId: string | undefined;
  /** The trace id of the call's `traceparent`: the trace the service continues. */
  traceId: string | undefined;
}

/**
 * What a real service cannot be made to do on demand. `fail` answers as the service's handler
 * would on throwing this error (a DomainError keeps its code; anything else is masked as
 * internal_error by the server); `hang` never answers (the caller's deadline ends it); `down` is a
 * service that cannot be reached (UNAVAILABLE without the platform's status details, as grpc-js
 * reports a refused connection); `stream` answers a server stream with these messages, then ends,
 * or fails with the first Error in it.
 * A client stream takes `fail`, `hang` and `down`, answered without reading its messages.
 * Unary only: `holdUntil` lets the call through to the real service once the promise settles (a
 * slow service, released when the test has seen what it waits for; the caller's deadline still
 * applies); `answer` answers this message instead of the service (a defect the real one never has).
 */
export type Fault =
  | { fail: Error }
  | { hang: true }
  | { down: true }
  | { holdUntil: PromiseLike<unknown> }
  | { answer: object }
  | { stream: readonly (object | Error)[]; onCancel?: () => void; endless?: boolean };

/**
 * The gateway's transport to one service: every call goes to the real service in this process and
 * is recorded, unless a test made that method faulty. Faults are per method name and last until
 * `heal()`.
 */
export class Upstream implements ChannelTransport {
  readonly calls: RecordedCall[] = [];
  private readonly faults = new Map<string, Fault>();
  private readonly awaited: { method: string; resolve: (call: RecordedCall) => void }[] = [];

  constructor(private readonly real: ChannelTransport) {}

  /** `method` is the RPC's name as in the proto (`Login`, `StreamChat`). */
  inject(method: string, fault: Fault): void {
    this.faults.set(method, fault);
  }

  heal(): void {
    this.faults.clear();
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Resolves when the gateway next calls `method`: the moment a request reached this service. */
  nextCall(method: string): Promise<RecordedCall> {
    return new Promise((resolve) => this.awaited.push({ method, resolve }));
  }

  unary(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): Promise<unknown> {
    const fault = this.record(method, request, headers);
    if (!fault) return this.real.unary(method, request, headers, deadline);
    if ('fail' in fault) return Promise.reject(asServiceError(fault.fail));
    if ('hang' in fault) return untilDeadline(deadline);
    if ('down' in fault) return Promise.reject(asUnavailable());
    if ('holdUntil' in fault) return heldUntil(fault.holdUntil, deadline, () => this.real.unary(method, request, headers, deadline));
    if ('answer' in fault) return Promise.resolve(method.responseDeserialize(method.responseSerialize(fault.answer as never)));
    return Promise.reject(new Error(`${method.path} is unary; a stream fault does not apply`));
  }

  serverStream(method: AnyMethod, request: unknown, headers: CallHeaders, deadline: Date): CallStream {
    const fault = this.record(method, request, headers);
    if (!fault) return this.real.serverStream(method, request, headers, deadline);
    if ('stream' in fault) return scriptedStream(method, fault);
    if ('fail' in fault) return scriptedStream(method, { stream: [fault.fail] });
    if ('down' in fault) return scriptedStream(method, { stream: [asUnavailable()] });
    if ('hang' in fault) return scriptedStream(method, { stream: [], endless: true });
    throw new Error(`${method.path} is a server stream; a unary-only fault does not apply`);
  }

  /** Recorded without a request: its messages are the stream's, read as the service takes them. */
  clientStream(method: AnyMethod, headers: CallHeaders, deadline: Date): RequestStream {
    const fault = this.record(method, undefined, headers);
    if (!fault) return this.real.clientStream(method, headers, deadline);
    if ('fail' in fault) return answeredRequestStream(Promise.reject(asServiceError(fault.fail)));
    if ('down' in fault) return answeredRequestStream(Promise.reject(asUnavailable()));
    if ('hang' in fault) return answeredRequestStream(untilDeadline(deadline));
    throw new Error(`${method.path} is a client stream; this fault does not apply`);
  }

  close(): void {
    this.real.close();
  }

  private record(method: AnyMethod, request: unknown, headers: CallHeaders): Fault | undefined {
    const name = method.path.slice(method.path.lastIndexOf('/') + 1);
    const call: RecordedCall = {
      path: method.path,
      method: name,
      request,
      principal: headers.principal,
      requestId: headers.requestId,
      traceId: headers.trace['traceparent']?.split('-')[1],
    };
    this.calls.push(call);
    for (const waiter of this.awaited.filter((entry) => entry.method === name)) {
      this.awaited.splice(this.awaited.indexOf(waiter), 1);
      waiter.resolve(call);
    }
    return this.faults.get(name);
  }
}

/** The status a GrpcServer sends for a handler that threw `error`. */
function asServiceError(error: Error): ServiceError {
  if (isServiceError(error)) return error;
  const domain = error instanceof DomainError ? error : new DomainError('internal_error', 'An unexpected error occurred.');
  const status = toGrpcStatus(domain);
  const code = status.code ?? GrpcStatus.UNKNOWN;
  return Object.assign(new Error(`${code} ${GrpcStatus[code]}: ${status.details ?? ''}`), {
    code,
    details: status.details ?? '',
    metadata: status.metadata ?? new Metadata(),
  });
}

function isServiceError(error: Error): error is ServiceError {
  return typeof (error as Partial<ServiceError>).code === 'number' && (error as Partial<ServiceError>).metadata instanceof Metadata;
}

/** What grpc-js answers when it cannot reach the server: no status details of the platform's. */
function asUnavailable(): ServiceError {
  return Object.assign(new Error(`${GrpcStatus.UNAVAILABLE} UNAVAILABLE: No connection established`), {
    code: GrpcStatus.UNAVAILABLE,
    details: 'No connection established',
    metadata: new Metadata(),
  });
}

/** `call` once `gate` settles, unless the caller's deadline passes first (then it is never made). */
function heldUntil(gate: PromiseLike<unknown>, deadline: Date, call: () => Promise<unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(asDeadlineExceeded()), Math.max(0, deadline.getTime() - Date.now()));
    const go = () => {
      clearTimeout(timer);
      if (Date.now() < deadline.getTime()) call().then(resolve, reject);
    };
    gate.then(go, go);
  });
}

function untilDeadline(deadline: Date): Promise<never> {
  return new Promise((_resolve, reject) => {
    setTimeout(() => reject(asDeadlineExceeded()), Math.max(0, deadline.getTime() - Date.now()));
  });
}

function asDeadlineExceeded(): ServiceError {
  return Object.assign(new Error(`${GrpcStatus.DEADLINE_EXCEEDED} DEADLINE_EXCEEDED: Deadline exceeded`), {
    code: GrpcStatus.DEADLINE_EXCEEDED,
    details: 'Deadline exceeded',
    metadata: new Metadata(),
  });
}

/**
 * A server stream that yields the script's messages (each encoded and decoded as the wire would),
 * fails at its first Error, and, when `endless`, then waits until the reader cancels.
 */
function scriptedStream(method: AnyMethod, fault: Extract<Fault, { stream: unknown }>): CallStream {
  let cancel: () => void = () => undefined;
  const cancelled = new Promise<void>((resolve) => {
    cancel = resolve;
  });
  async function* messages(): AsyncGenerator<unknown> {
    for (const item of fault.stream) {
      if (item instanceof Error) throw asServiceError(item);
      yield method.responseDeserialize(method.responseSerialize(item as never));
      // Each message in its own turn, as frames off a socket arrive.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (fault.endless) {
      await cancelled;
      fault.onCancel?.();
    }
  }
  const iterator = messages();
  return {
    [Symbol.asyncIterator]: () => iterator,
    cancel: () => cancel(),
  };
}
