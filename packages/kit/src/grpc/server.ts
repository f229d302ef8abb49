import {
  Server,
  ServerCredentials,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { once } from 'node:events';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { HealthService, type HealthCheckRequest } from '@agent-platform/proto/grpc-health/v1';
import { DomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settlesWithin } from '../timeout.js';
import { HealthRegistry, ServingStatus } from './health.js';
import { extractTraceContext, readPrincipal, readRequestId, type Principal } from './metadata.js';
import { InProcessCalls, type MessageSink, type Outcome, type StreamRun, type UnaryRun } from './in-process.js';
import { CALL_CANCELLED, toGrpcStatus } from './status.js';
import type { ChannelTransport } from './transport.js';
import type { IsStreaming, RequestOf, ResponseOf, RpcServiceDefinition } from './types.js';

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

/** A unary method answers once; a server-streaming one yields its messages. */
export type Handlers<D extends RpcServiceDefinition> = {
  [K in keyof D]: IsStreaming<D[K]> extends true
    ? (request: RequestOf<D[K]>, ctx: CallContext) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, ctx: CallContext) => Promise<ResponseOf<D[K]>>;
};

export interface GrpcServerOptions {
  logger: Logger;
  /** Wraps every handler, e.g. in a MikroORM RequestContext. */
  around?: <T>(run: () => Promise<T>) => Promise<T>;
  /** Turns infrastructure failures (a lost database) into the right DomainError. */
  classifyError?: (error: unknown) => DomainError | undefined;
}

const tracer = trace.getTracer('@agent-platform/kit/grpc');

/**
 * A grpc-js server whose services are async functions, with health, tracing and error mapping.
 * The same calls can come from its own process through `inProcess()`, without the network.
 */
export class GrpcServer {
  readonly health = new HealthRegistry();
  private readonly server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  private readonly local = new InProcessCalls();
  private readonly options: GrpcServerOptions;

  constructor(options: GrpcServerOptions) {
    this.options = options;
    this.server.addService(HealthService, this.health.implementation());
    this.local.register(HealthService.check, { unary: (request) => Promise.resolve(this.health.check(request as HealthCheckRequest)) });
  }

  add<D extends RpcServiceDefinition>(serviceName: string, definition: D, handlers: Handlers<D>): this {
    const implementation: UntypedServiceImplementation = {};
    for (const method of Object.keys(definition) as (keyof D & string)[]) {
      const methodDefinition = definition[method]!;
      if (methodDefinition.responseStream) {
        const run = this.streamRun(methodDefinition.path, handlers[method] as StreamHandler<unknown, unknown>);
        implementation[method] = overHttp2Stream(run);
        this.local.register(methodDefinition, { stream: run });
      } else {
        const run = this.unaryRun(methodDefinition.path, handlers[method] as UnaryHandler<unknown, unknown>);
        implementation[method] = overHttp2Unary(run);
        this.local.register(methodDefinition, { unary: run });
      }
    }
    this.server.addService(definition as unknown as ServiceDefinition, implementation);
    this.health.set(serviceName, ServingStatus.NOT_SERVING);
    return this;
  }

  /** Binds `host:port` (port 0 picks a free one), marks every service SERVING, returns the port. */
  async listen(host: string, port: number): Promise<number> {
    const bound = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, actual) =>
        error ? reject(error) : resolve(actual),
      );
    });
    this.local.open();
    this.health.setAll(ServingStatus.SERVING);
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
    this.health.setAll(ServingStatus.NOT_SERVING);
    this.health.closeWatchers();
    const drained = Promise.all([new Promise<void>((resolve) => this.server.tryShutdown(() => resolve())), this.local.drain()]);
    if (!(await settlesWithin(drained, graceMs))) {
      this.server.forceShutdown();
      this.local.cutAll();
    }
  }

  private unaryRun(path: string, handler: UnaryHandler<unknown, unknown>): UnaryRun {
    const around = this.options.around ?? ((run) => run());
    return (request, metadata, signal) => {
      const { ctx, span, parent } = this.begin(path, metadata, signal);
      // async, so a handler that throws before returning a promise is mapped like a rejection.
      const run = async () => around(() => handler(request, ctx));
      return context.with(trace.setSpan(parent, span), run).then(
        (value): Outcome<unknown> => {
          span.end();
          return { ok: true, value };
        },
        (error: unknown): Outcome<unknown> => ({ ok: false, status: this.fail(error, ctx, span) }),
      );
    };
  }

  /**
   * Writes what the handler yields, waiting for the caller to read when it is behind. A cancelled
   * call stops the iteration (the generator's `finally` runs), so work for a caller that went away
   * ends too.
   */
  private streamRun(path: string, handler: StreamHandler<unknown, unknown>): StreamRun {
    const around = this.options.around ?? ((run) => run());
    return (request, metadata, signal, sink) => {
      const { ctx, span, parent } = this.begin(path, metadata, signal);
      const run = async () =>
        around(async () => {
          for await (const message of handler(request, ctx)) {
            if (sink.cancelled) break;
            const behind = sink.write(message);
            if (behind) await behind;
          }
        });
      return context.with(trace.setSpan(parent, span), run).then(
        (): Outcome<undefined> => {
          span.end();
          return { ok: true, value: undefined };
        },
        (error: unknown): Outcome<undefined> => ({ ok: false, status: this.fail(error, ctx, span) }),
      );
    };
  }

  private begin(path: string, metadata: Metadata, signal: AbortSignal) {
    const parent = extractTraceContext(metadata);
    const span = tracer.startSpan(path, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': path } }, parent);
    const requestId = readRequestId(metadata);
    const ctx: CallContext = {
      principal: readPrincipal(metadata),
      requestId,
      logger: this.options.logger.child({ rpc: path, ...(requestId ? { request_id: requestId } : {}) }),
      signal,
    };
    return { ctx, span, parent };
  }

  /** The status a failure answers with; unexpected ones are logged, never shown. */
  private fail(error: unknown, ctx: CallContext, span: Span) {
    const domainError = error instanceof DomainError ? error : this.options.classifyError?.(error);
    if (domainError) {
      span.setAttribute('error.code', domainError.code);
    } else {
      ctx.logger.error({ err: error }, 'unexpected error in gRPC handler');
      span.recordException(error instanceof Error ? error : String(error));
    }
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    return toGrpcStatus(domainError ?? new DomainError('internal_error', 'An unexpected error occurred.'));
  }
}

/** A unary call that came over HTTP/2, answered through grpc-js's callback. */
function overHttp2Unary(run: UnaryRun): (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => void {
  return (call, callback) => {
    void run(call.request, call.metadata, cancellationOf(call)).then((outcome) => (outcome.ok ? callback(null, outcome.value) : callback(outcome.status)));
  };
}

/** A server stream that came over HTTP/2: writes wait for 'drain'; a failure ends it with its status. */
function overHttp2Stream(run: StreamRun): (call: ServerWritableStream<unknown, unknown>) => void {
  return (call) => {
    const signal = cancellationOf(call);
    const sink: MessageSink = {
      write: (message) => (call.write(message) ? undefined : Promise.race([once(call, 'drain'), once(signal, 'abort')]).then(() => undefined)),
      get cancelled() {
        return call.cancelled;
      },
    };
    void run(call.request, call.metadata, signal, sink).then((outcome) => {
      if (call.cancelled) return;
      // grpc-js ends a server stream with the status of an 'error' event (code, details, metadata).
      if (outcome.ok) call.end();
      else call.emit('error', Object.assign(new Error(outcome.status.details), outcome.status));
    });
  };
}

/** Aborted when grpc-js reports the call cancelled (the caller went away or its deadline passed). */
function cancellationOf(call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>): AbortSignal {
  const aborter = new AbortController();
  call.on('cancelled', () => aborter.abort(CALL_CANCELLED));
  return aborter.signal;
}

type UnaryHandler<Request, Response> = (request: Request, ctx: CallContext) => Promise<Response>;
type StreamHandler<Request, Response> = (request: Request, ctx: CallContext) => AsyncIterable<Response>;
