import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

function isLevelEnabled(logger: FastifyBaseLogger, level: Level): boolean {
  const check = (logger as { isLevelEnabled?: unknown }).isLevelEnabled;
  return typeof check === 'function' ? Boolean((check as (level: string) => unknown).call(logger, level)) : true;
}

/**
 * Fastify's `childLoggerFactory`: a request's logger whose pino child (its request id serialised
 * into every line) is made when the request first logs at a level the logger writes. pino makes a
 * child's bindings at once, and at `warn` most requests never log a line.
 */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // A route's own level would need the real child to judge what it writes.
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyRequestLogger(parent, bindings, options);
}

/**
 * One object per request, its methods on the prototype: every request makes one, and it lives as
 * long as the request, so closures of its own would be copied by each young collection it spans.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return (this.real ?? this.parent).level;
  }

  set level(level: string) {
    this.made().level = level;
  }

  fatal(...args: unknown[]): void {
    this.logAt('fatal', args);
  }

  error(...args: unknown[]): void {
    this.logAt('error', args);
  }

  warn(...args: unknown[]): void {
    this.logAt('warn', args);
  }

  info(...args: unknown[]): void {
    this.logAt('info', args);
  }

  debug(...args: unknown[]): void {
    this.logAt('debug', args);
  }

  trace(...args: unknown[]): void {
    this.logAt('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made().child(bindings, options);
  }

  private made(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings, this.options));
  }

  private logAt(level: Level, args: unknown[]): void {
    if (!isLevelEnabled(this.real ?? this.parent, level)) return;
    const logger = this.made();
    Reflect.apply(logger[level], logger, args);
  }
}
