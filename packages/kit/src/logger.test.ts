import { Writable } from 'node:stream';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { startTelemetry } from './telemetry/index.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>) };
}

await startTelemetry({ serviceName: 'logger-test' });

describe('createLogger', () => {
  it('adds the trace and span ids of the active trace', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ service: 'svc', destination: stream });
    const remote = trace.setSpanContext(context.active(), {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    context.with(remote, () => logger.info('inside'));
    logger.info('outside');
    const [inside, outside] = lines();
    expect(inside).toMatchObject({ service: 'svc', msg: 'inside', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' });
    expect(outside).not.toHaveProperty('trace_id');
  });

  it('never writes secrets', () => {
    const { stream, lines } = capture();
    const logger = createLogger({ service: 'svc', destination: stream });
    logger.info({ password: 'hunter2', body: { refresh_token: 'rtk_secret' }, req: { headers: { authorization: 'Bearer abc' } } }, 'login');
    const text = JSON.stringify(lines());
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('rtk_secret');
    expect(text).not.toContain('Bearer abc');
  });
});
