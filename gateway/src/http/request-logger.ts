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
  let child: FastifyBaseLogger | undefined;
  const made = () => (child ??= parent.child(bindings, options));
  const logAt = (level: Level) =>
    ((...args: unknown[]) => {
      if (!isLevelEnabled(child ?? parent, level)) return;
      const real = made();
      Reflect.apply(real[level], real, args);
    }) as FastifyBaseLogger[Level];
  return {
    get level() {
      return (child ?? parent).level;
    },
    set level(level: string) {
      made().level = level;
    },
    fatal: logAt('fatal'),
    error: logAt('error'),
    warn: logAt('warn'),
    info: logAt('info'),
    debug: logAt('debug'),
    trace: logAt('trace'),
    silent: () => undefined,
    child: (more, childOptions) => made().child(more, childOptions),
  };
}
