import { Writable } from 'node:stream';
import { createLogger } from '@agent-platform/kit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';

const lines: Record<string, unknown>[] = [];
let h: Harness;
beforeAll(async () => {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  h = await startHarness({}, createLogger({ service: 'gateway-test', level: 'info', destination }));
});
afterAll(async () => {
  await h.close();
});

it('logs one access line per request, with its request id, method, path, status and time', async () => {
  const before = lines.length;
  await h.app.inject({ method: 'GET', url: '/api/v1/nowhere?x=1', headers: { 'x-request-id': 'access-log-1' } });
  const mine = lines.slice(before).filter((line) => line['reqId'] === 'access-log-1');
  expect(mine).toEqual([expect.objectContaining({ msg: 'request', method: 'GET', url: '/api/v1/nowhere?x=1', status: 404, ms: expect.any(Number) })]);
});
