import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

/** Keys whose values never reach a log line, wherever they sit in a logged object. */
const REDACTED_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  'refresh_token',
  '*.refresh_token',
  'authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'DATABASE_URL',
  'REDIS_URL',
];

export interface LoggerSettings {
  service: string;
  level?: LoggerOptions['level'];
  /** Where lines go; defaults to stdout. Tests pass a stream to read them. */
  destination?: NodeJS.WritableStream;
}

/**
 * The trace the caller's work belongs to: continued from an incoming `traceparent` (propagation is
 * always on) or begun by the SDK; undefined without either, where the active span is a placeholder
 * of zeros.
 */
function activeSpanContext(): { traceId: string; spanId: string } | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** The active trace's id (what a run links, decisions §16), or null when there is none. */
export function activeTraceId(): string | null {
  return activeSpanContext()?.traceId ?? null;
}

/** One JSON line per event, with the active trace and span ids so logs join traces. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: settings.service },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const spanContext = activeSpanContext();
      return spanContext ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
    },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
