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

/** One JSON line per event, with the active trace and span ids so logs join traces. */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: { service: settings.service },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin() {
      const spanContext = trace.getActiveSpan()?.spanContext();
      // Without an incoming traceparent or an SDK the active span is a placeholder of zeros.
      if (!spanContext || !isSpanContextValid(spanContext)) return {};
      return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
    },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
