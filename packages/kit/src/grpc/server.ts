import {
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { once, type EventEmitter } from 'node:events';
import { context, trace } from '@opentelemetry/api';
import { DomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settlesWithin } from '../timeout.js';
import { HEALTH_CHECK_METHOD, HEALTH_SERVICE, HealthRegistry } from './health.js';
import { fromMetadata, type CallHeaders, type Principal } from './metadata.js';
import { startServerCall, type ServerCall } from './observe.js';
import { InProcessCalls, type ClientStreamRun, type MethodRun, type Outcome, type ServerStreamRun, type UnaryRun } from './in-process.js';
import { addReflection } from './reflection.js';
import { CALL_CANCELLED, GrpcStatus, toGrpcStatus } from './status.js';
import { pump, untilAborted, type MessageSink } from './stream.js';
import type { ChannelTransport } from './transport.js';
import { callKindOf, type AnyMethod, type CallKindOf, type RequestOf, type ResponseOf, type RpcServiceDefinition } from './types.js';

/** What a handler knows about the call besides its request message. */
export interface CallContext {
  /** Set when the gateway forwarded an authenticated principal. */
  readonly principal: Principal | undefined;
  readonly requestId: string | undefined;
  readonly logger: Logger;
  /** Aborted when the caller cancels or its deadline passes. */
  readonly signal: AbortSignal;
}

export function requirePrincipal(ctx: CallContext): Principal {
  if (!ctx.principal || ctx.principal.tenantId === '') {
    throw new DomainError('unauthorized', 'This call needs an authenticated principal.');
  }
  return ctx.principal;
}

/**
 * A unary method answers once; a server-streaming one yields its messages; a client-streaming one
 * reads the caller's messages and answers once. It may answer, or fail, before reading them all;
 * its iteration of them rejects if the call is cancelled (`ctx.signal` aborts then too).
 */
export type Handlers<D extends RpcServiceDefinition> = {
  [K in keyof D]: Handler<D[K]>;
};

type Handler<M> = {
  unary: UnaryHandler<RequestOf<M>, ResponseOf<M>>;
  serverStream: ServerStreamHandler<RequestOf<M>, ResponseOf<M>>;
  clientStream: ClientStreamHandler<RequestOf<M>, ResponseOf<M>>;
}[CallKindOf<M>];

export interface GrpcServerOptions {
  logger: Logger;
  /** Wraps every handler, e.g. in a MikroORM RequestContext. */
  around?: <T>(run: () => Promise<T>) => Promise<T>;
  /** Turns infrastructure failures (a lost database) into the right DomainError. */
  classifyError?: (error: unknown) => DomainError | undefined;
  /**
   * How long a caller's connection lives before the server asks it to reconnect (GOAWAY; calls on
   * it finish first). Bounded so that callers resolve again and replicas that joined since get
   * their share of the calls. Default 30 s; grpc-js adds ±10% jitter.
   */
  maxConnectionAgeMs?: number;
}

const DEFAULT_MAX_CONNECTION_AGE_MS = 30_000;

/**
 * A grpc-js server whose services are async functions, with health, server reflection, tracing and
 * error mapping. The same calls can come from its own process through `inProcess()`, without the
 * network.
 */
export class GrpcServer {
  readonly health = new HealthRegistry();
  private readonly server: Server;
  private readonly local = new InProcessCalls();
  private readonly options: GrpcServerOptions;
  /** Full names of the services added, e.g. `agentplatform.identity.v1.UserService`. */
  private readonly serviceNames: string[] = [];

  constructor(options: GrpcServerOptions) {
    this.options = options;
    this.server = new Server({
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_connection_age_ms': options.maxConnectionAgeMs ?? DEFAULT_MAX_CONNECTION_AGE_MS,
    });
    this.health.addTo(this.server);
    this.local.register(HEALTH_CHECK_METHOD, { unary: (request) => this.health.check(request) });
  }

  /** Adds a service's handlers; a method that streams both ways throws, naming it. */
  add<D extends RpcServiceDefinition>(serviceName: string, definition: D, handlers: Handlers<D>): this {
    // Every method's run first, so a refused one leaves nothing of the service registered.
    const runs = Object.keys(definition).map((method) => ({ method, ...this.runOf(definition[method]!, handlers[method]) }));
    const implementation: UntypedServiceImplementation = {};
    for (const { method, http2, local } of runs) {
      implementation[method] = http2;
      this.local.register(definition[method]!, local);
    }
    this.server.addService(definition as unknown as ServiceDefinition, implementation);
    this.health.set(serviceName, 'NOT_SERVING');
    this.serviceNames.push(serviceName);
    return this;
  }

  /**
   * Adds server reflection for the services added so far and health, binds `host:port` (port 0
   * picks a free one), marks every service SERVING, returns the port.
   */
  async listen(host: string, port: number): Promise<number> {
    addReflection(this.server, [...this.serviceNames, HEALTH_SERVICE]);
    const bound = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, actual) =>
        error ? reject(error) : resolve(actual),
      );
    });
    this.local.open();
    this.health.setAll('SERVING');
    return bound;
  }

  /**
   * A transport for a GrpcChannel in this process: calls skip HTTP/2 but still cross protobuf and
   * run through the same handlers. They are taken while the server listens, as on its port.
   */
  inProcess(): ChannelTransport {
    return this.local;
  }

  /** Stops taking calls, lets running ones finish for up to `graceMs`, then cuts the rest. */
  async stop(graceMs = 5_000): Promise<void> {
    this.health.setAll('NOT_SERVING');
    this.health.closeWatchers();
    const drained = Promise.all([new Promise<void>((resolve) => this.server.tryShutdown(() => resolve())), this.local.drain()]);
    if (!(await settlesWithin(drained, graceMs))) {
      this.server.forceShutdown();
      this.local.cutAll();
    }
  }

  /** One run per method, whichever transport brings the call: the same span, measurement and errors. */
  private runOf(method: AnyMethod, handler: unknown): { http2: UntypedServiceImplementation[string]; local: MethodRun } {
    switch (callKindOf(method)) {
      case 'unary': {
        const run: UnaryRun = this.answerRun(method.path, handler as UnaryHandler<unknown, unknown>);
        return { http2: overHttp2Unary(run), local: { unary: run } };
      }
      case 'serverStream': {
        const run = this.serverStreamRun(method.path, handler as ServerStreamHandler<unknown, unknown>);
        return { http2: overHttp2ServerStream(run), local: { serverStream: run } };
      }
      case 'clientStream': {
        const run = this.clientStreamRun(method.path, handler as ClientStreamHandler<unknown, unknown>);
        return { http2: overHttp2ClientStream(run), local: { clientStream: run } };
      }
    }
  }

  /** A call its handler answers once: a unary call, or a client stream with its messages for the request. */
  private answerRun<Request>(path: string, handler: (request: Request, ctx: CallContext) => Promise<unknown>) {
    const around = this.options.around ?? ((run) => run());
    return (request: Request, headers: CallHeaders, signal: AbortSignal): Promise<Outcome<unknown>> => {
      const { ctx, call } = this.begin(path, headers, signal);
      // async, so a handler that throws before returning a promise is mapped like a rejection.
      const run = async () => around(() => handler(request, ctx));
      return context.with(call.ctx, run).then(
        (value): Outcome<unknown> => {
          call.end(GrpcStatus.OK);
          return { ok: true, value };
        },
        (error: unknown): Outcome<unknown> => ({ ok: false, status: this.fail(error, ctx, call) }),
      );
    };
  }

  /** The handler reads the caller's messages as they arrive; once the call is cancelled, a read rejects. */
  private clientStreamRun(path: string, handler: ClientStreamHandler<unknown, unknown>): ClientStreamRun {
    const run = this.answerRun(path, handler);
    return (requests, headers, signal) => run(untilAborted(requests, signal), headers, signal);
  }

  /**
   * Writes what the handler yields, waiting for the caller to read when it is behind. A cancelled
   * call stops the iteration (the generator's `finally` runs), so work for a caller that went away
   * ends too.
   */
  private serverStreamRun(path: string, handler: ServerStreamHandler<unknown, unknown>): ServerStreamRun {
    const around = this.options.around ?? ((run) => run());
    return (request, headers, signal, sink) => {
      const { ctx, call } = this.begin(path, headers, signal);
      const run = async () => around(async () => pump(handler(request, ctx), sink, signal));
      return context.with(call.ctx, run).then(
        (): Outcome<undefined> => {
          call.end(GrpcStatus.OK);
          return { ok: true, value: undefined };
        },
        (error: unknown): Outcome<undefined> => ({ ok: false, status: this.fail(error, ctx, call) }),
      );
    };
  }

  private begin(path: string, headers: CallHeaders, signal: AbortSignal) {
    const call = startServerCall(path, headers);
    const { requestId } = headers;
    const parentLogger = this.options.logger;
    let logger: Logger | undefined;
    const ctx: CallContext = {
      principal: headers.principal,
      requestId,
      // Made on first use: most calls log nothing, and a child logger costs a share of a fast call.
      get logger() {
        return (logger ??= parentLogger.child({ rpc: path, ...(requestId ? { request_id: requestId } : {}) }));
      },
      signal,
    };
    return { ctx, call };
  }

  /** The status a failure answers with; unexpected ones are logged, never shown. */
  private fail(error: unknown, ctx: CallContext, call: ServerCall) {
    const domainError = error instanceof DomainError ? error : this.options.classifyError?.(error);
    // The active span is the call's own (or instrumentation-grpc's): the error goes on it.
    const span = trace.getSpan(call.ctx);
    if (domainError) {
      span?.setAttribute('error.type', domainError.code);
    } else {
      ctx.logger.error({ err: error }, 'unexpected error in gRPC handler');
      span?.recordException(error instanceof Error ? error : String(error));
    }
    const status = toGrpcStatus(domainError ?? new DomainError('internal_error', 'An unexpected error occurred.'));
    call.end(status.code ?? GrpcStatus.UNKNOWN);
    return status;
  }
}

/** A unary call that came over HTTP/2, answered through grpc-js's callback. */
function overHttp2Unary(run: UnaryRun): (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    void run(call.request, fromMetadata(call.metadata), cancellationOf(call)).then(replyThrough(callback));
  };
}

/** A client stream that came over HTTP/2: grpc-js reads its messages only as the handler asks for them. */
function overHttp2ClientStream(run: ClientStreamRun): (call: ServerReadableStream<unknown, unknown>, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    void run(call, fromMetadata(call.metadata), cancellationOf(call)).then(replyThrough(callback));
  };
}

function replyThrough(callback: sendUnaryData<unknown>): (outcome: Outcome<unknown>) => void {
  return (outcome) => (outcome.ok ? callback(null, outcome.value) : callback(outcome.status));
}

/** A server stream that came over HTTP/2: writes wait for 'drain'; a failure ends it with its status. */
function overHttp2ServerStream(run: ServerStreamRun): (call: ServerWritableStream<unknown, unknown>) => void {
  return (call) => {
    const signal = cancellationOf(call);
    const sink: MessageSink = {
      write: (message) => (call.write(message) ? undefined : once(call, 'drain').then(() => undefined)),
    };
    void run(call.request, fromMetadata(call.metadata), signal, sink).then((outcome) => {
      if (call.cancelled) return;
      // grpc-js ends a server stream with the status of an 'error' event (code, details, metadata).
      if (outcome.ok) call.end();
      else call.emit('error', Object.assign(new Error(outcome.status.details), outcome.status));
    });
  };
}

/** Aborted when grpc-js reports the call cancelled (the caller went away or its deadline passed). */
function cancellationOf(call: EventEmitter): AbortSignal {
  const aborter = new AbortController();
  call.on('cancelled', () => aborter.abort(CALL_CANCELLED));
  return aborter.signal;
}

type UnaryHandler<Request, Response> = (request: Request, ctx: CallContext) => Promise<Response>;
type ServerStreamHandler<Request, Response> = (request: Request, ctx: CallContext) => AsyncIterable<Response>;
type ClientStreamHandler<Request, Response> = (requests: AsyncIterable<Request>, ctx: CallContext) => Promise<Response>;
