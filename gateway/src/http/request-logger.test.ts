import { Writable } from 'node:stream';
import { createLogger } from '@agent-platform/kit';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from './request-logger.js';

function loggerAt(level: string) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ service: 'test', level, destination });
  return { logger, lines, childSpy: vi.spyOn(logger, 'child') };
}

describe('lazyRequestLogger', () => {
  it('makes no child for lines below the level, and one child, with the bindings, for the lines written', () => {
    const { logger, lines, childSpy } = loggerAt('warn');
    const requestLogger = lazyRequestLogger(logger, { reqId: 'req-1' }, {});
    requestLogger.info({ status: 200 }, 'request');
    requestLogger.debug('detail');
    expect(childSpy).not.toHaveBeenCalled();

    requestLogger.warn({ attempt: 1 }, 'slow');
    requestLogger.error('failed');
    expect(childSpy).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'req-1', attempt: 1, msg: 'slow', level: 40 }),
      expect.objectContaining({ reqId: 'req-1', msg: 'failed', level: 50 }),
    ]);
    expect(requestLogger.level).toBe('warn');
  });

  it("gives a grandchild both generations' bindings", () => {
    const { logger, lines } = loggerAt('info');
    lazyRequestLogger(logger, { reqId: 'req-2' }, {}).child({ plugin: 'x' }).info('hello');
    expect(lines).toEqual([expect.objectContaining({ reqId: 'req-2', plugin: 'x', msg: 'hello' })]);
  });
});
