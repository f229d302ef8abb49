import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { freePort } from '../testing/index.js';
import { metricsAddressFrom, startTelemetry } from './index.js';

// The SDK is one per process: these steps run in order on it, as a process's hook and main would.
const held: Server[] = [];
afterAll(async () => {
  for (const server of held) await new Promise((resolve) => server.close(resolve));
});

describe('startTelemetry', () => {
  it('keeps metrics without a listener, for a server of the caller to answer scrapes with', async () => {
    const telemetry = await startTelemetry({ serviceName: 'telemetry-test' });
    expect(telemetry.metricsUrl).toBeUndefined();
    metrics.getMeter('telemetry-test').createCounter('test_scrapes').add(3);

    const server = createHttpServer((request, response) => telemetry.serveMetrics(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/anything`);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await answer.text()).toMatch(/^test_scrapes_total\{[^}]*\} 3$/m);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails on a taken metrics port with the listen error, and opens none', async () => {
    const port = await freePort();
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    held.push(blocker);
    await expect(startTelemetry({ serviceName: 'telemetry-test', metrics: { host: '127.0.0.1', port } })).rejects.toMatchObject({ code: 'EADDRINUSE', port });
    expect((await startTelemetry({ serviceName: 'telemetry-test' })).metricsUrl).toBeUndefined();
  });

  it('opens the listener a later call names (the main, after the hook), serving /metrics only, until shutdown', async () => {
    const port = await freePort();
    const telemetry = await startTelemetry({ serviceName: 'telemetry-test', metrics: { host: '127.0.0.1', port } });
    expect(telemetry.metricsUrl).toBe(`http://127.0.0.1:${port}/metrics`);
    expect(await (await fetch(telemetry.metricsUrl!)).text()).toMatch(/^test_scrapes_total/m);
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);

    await telemetry.shutdown();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

describe('metricsAddressFrom', () => {
  it('defaults to 9464 on loopback, serves none when "off", and refuses anything else as a ConfigError', () => {
    expect(metricsAddressFrom({})).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(metricsAddressFrom({ METRICS_PORT: '9470', METRICS_HOST: '0.0.0.0' })).toEqual({ host: '0.0.0.0', port: 9470 });
    expect(metricsAddressFrom({ METRICS_PORT: 'off' })).toBeUndefined();
    expect(() => metricsAddressFrom({ METRICS_PORT: 'nine' })).toThrow(ConfigError);
  });
});
