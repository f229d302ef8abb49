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

  // The SDK keys a series by its attributes' hash, whose key sort is patched (patches/, README).
  it('keeps one series per attribute set, whatever the order its keys were written in', async () => {
    const telemetry = await startTelemetry({ serviceName: 'telemetry-test' });
    const histogram = metrics.getMeter('telemetry-test').createHistogram('test_orders');
    histogram.record(1, { route: '/a', method: 'GET', status: 200 });
    histogram.record(1, { status: 200, route: '/a', method: 'GET' });
    histogram.record(1, { method: 'GET', status: 200, route: '/a' });
    histogram.record(1, { method: 'GET', status: 404, route: '/a' });
    const server = createHttpServer((request, response) => telemetry.serveMetrics(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const scrape = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
      // Labels print in the order the series' first measurement wrote them.
      const labelsOf = (text: string) => text.split(',').filter((label) => !label.startsWith('otel_scope_')).sort().join(',');
      const counts = [...scrape.matchAll(/^test_orders_count\{([^}]*)\} (\d+)$/gm)].map(([, labels, count]) => [labelsOf(labels!), Number(count)]);
      expect(counts).toEqual([
        ['method="GET",route="/a",status="200"', 3],
        ['method="GET",route="/a",status="404"', 1],
      ]);
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
