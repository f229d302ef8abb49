import {
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { once } from 'node:events';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { HealthService } from '@agent-platform/proto/grpc-health/v1';
import { DomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import { HealthRegistry, ServingStatus } from './health.js';
import { extractTraceContext, readPrincipal, readRequestId, type Principal } from './metadata.js';
import { toGrpcStatus } from './status.js';
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
// One shared abort reason: grpc-js reports `cancelled` at the end of many calls, and an Error per
// call (with its stack trace) is measurable on the hot path.
const CANCELLED = new DomainError('service_unavailable', 'The call was cancelled.');

/** A grpc-js server whose services are async functions, with health, tracing and error mapping. */
export class GrpcServer {
  readonly health = new HealthRegistry();
  private readonly server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  private readonly options: GrpcServerOptions;

  constructor(options: GrpcServerOptions) {
    this.options = options;
    this.server.addService(HealthService, this.health.implementation());
  }

  add<D extends RpcServiceDefinition>(serviceName: string, definition: D, handlers: Handlers<D>): this {
    const implementation: UntypedServiceImplementation = {};
    for (const method of Object.keys(definition) as (keyof D & string)[]) {
      const { path, responseStream } = definition[method]!;
      implementation[method] = responseStream
        ? this.wrapStream(path, handlers[method] as StreamHandler<unknown, unknown>)
        : this.wrap(path, handlers[method] as UnaryHandler<unknown, unknown>);
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
    this.health.setAll(ServingStatus.SERVING);
    return bound;
  }

  /** Stops taking calls, lets running ones finish for up to `graceMs`, then cuts the rest. */
  async stop(graceMs = 5_000): Promise<void> {
    this.health.setAll(ServingStatus.NOT_SERVING);
    this.health.closeWatchers();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      timer.unref();
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private wrap<Request, Response>(path: string, handler: UnaryHandler<Request, Response>): (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => void {
    const around = this.options.around ?? ((run) => run());
    return (call, callback) => {
      const { ctx, span, parent } = this.begin(path, call);
      // async, so a handler that throws before returning a promise is mapped like a rejection.
      const run = async () => around(() => handler(call.request, ctx));
      context.with(trace.setSpan(parent, span), run).then(
        (response) => {
          span.end();
          callback(null, response);
        },
        (error: unknown) => callback(this.fail(error, ctx, span)),
      );
    };
  }

  /**
   * Writes what the handler yields, waiting for the client to read when its buffer is full; a
   * failure ends the stream with the mapped status. A cancelled call stops the iteration (the
   * generator's `finally` runs), so work for a caller that went away ends too.
   */
  private wrapStream<Request, Response>(path: string, handler: StreamHandler<Request, Response>): (call: ServerWritableStream<Request, Response>) => void {
    const around = this.options.around ?? ((run) => run());
    return (call) => {
      const { ctx, span, parent } = this.begin(path, call);
      const run = async () =>
        around(async () => {
          for await (const message of handler(call.request, ctx)) {
            if (call.cancelled) break;
            if (!call.write(message)) await Promise.race([once(call, 'drain'), once(ctx.signal, 'abort')]);
          }
        });
      context.with(trace.setSpan(parent, span), run).then(
        () => {
          span.end();
          if (!call.cancelled) call.end();
        },
        (error: unknown) => {
          const status = this.fail(error, ctx, span);
          // grpc-js ends a server stream with the status of an 'error' event (code, details, metadata).
          if (!call.cancelled) call.emit('error', Object.assign(new Error(status.details), status));
        },
      );
    };
  }

  private begin(path: string, call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>) {
    const parent = extractTraceContext(call.metadata);
    const span = tracer.startSpan(path, { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': path } }, parent);
    const requestId = readRequestId(call.metadata);
    const aborter = new AbortController();
    call.on('cancelled', () => aborter.abort(CANCELLED));
    const ctx: CallContext = {
      principal: readPrincipal(call.metadata),
      requestId,
      logger: this.options.logger.child({ rpc: path, ...(requestId ? { request_id: requestId } : {}) }),
      signal: aborter.signal,
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

type UnaryHandler<Request, Response> = (request: Request, ctx: CallContext) => Promise<Response>;
type StreamHandler<Request, Response> = (request: Request, ctx: CallContext) => AsyncIterable<Response>;
