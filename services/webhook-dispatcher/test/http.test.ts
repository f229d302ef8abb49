import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { MAX_RESPONSE_BYTES } from '../src/deliveries/http-sender.js';
import { createWebhook, dispatcherTest, newTenant, waitForDeliveries } from './support/harness.js';

const TIMEOUT_MS = 1_000;
const test = dispatcherTest({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_SCHEDULE: '0,60' } });

describe('HTTP behaviour of an attempt', () => {
  test('does not follow redirects: a 3xx is a failed attempt', async ({ dispatcher }) => {
    const receiver = await startReceiver((request) =>
      request.path === '/moved' ? { status: 301, headers: { location: '/elsewhere' } } : { status: 200 },
    );
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/moved'));
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: false, responseStatus: 301, error: 'redirect (HTTP 301) not followed' });
    await dispatcher.publish(tenant.tenantId, 'agent.updated');
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items.find((d) => d.eventType === 'agent.updated')).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 301 });
    });
    expect(receiver.received('/elsewhere')).toEqual([]);
  });

  test('gives up when the whole attempt outlasts WEBHOOK_TIMEOUT_MS', { timeout: 15_000 }, async ({ dispatcher }) => {
    const receiver = await startReceiver({ hold: 'answer' });
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/slow'));
    const started = Date.now();
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    const took = Date.now() - started;
    expect(outcome).toMatchObject({ success: false, responseStatus: 0, error: `timed out after ${TIMEOUT_MS} ms` });
    expect(outcome.responseTimeMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(outcome.responseTimeMs).toBeLessThan(TIMEOUT_MS + 500);
    expect(took).toBeLessThan(TIMEOUT_MS + 1_500);
    expect(receiver.received('/slow')).toHaveLength(1);
  });

  test('a receiver trickling its body is cut off at the time-out too', { timeout: 15_000 }, async ({ dispatcher }) => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 100);
      response.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const tenant = newTenant();
      const { webhook } = await createWebhook(dispatcher.client, tenant, `http://127.0.0.1:${port}/trickle`);
      const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
      expect(outcome).toMatchObject({ success: false, error: `timed out after ${TIMEOUT_MS} ms` });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  test('reads at most 64 KiB of a response and discards it', async ({ dispatcher }) => {
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const receiver = await startReceiver(() => ({ status: 200, body: huge }));
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/huge'));
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: true, responseStatus: 200 });
    expect(MAX_RESPONSE_BYTES).toBe(64 * 1024);
  });

  test('records what went wrong when no response came', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const port = receiver.port;
    await receiver.close();
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, `http://127.0.0.1:${port}/closed`);
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: false, responseStatus: 0, error: 'connection refused' });
  });

  test('any 2xx is a success', async ({ dispatcher }) => {
    const receiver = await startReceiver((request) => ({ status: Number(request.path.slice(1)) }));
    const tenant = newTenant();
    for (const status of [200, 201, 202, 204, 299]) {
      const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url(`/${status}`));
      const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
      expect(outcome).toMatchObject({ success: true, responseStatus: status });
    }
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/404'));
    expect(await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal })).toMatchObject({
      success: false,
      responseStatus: 404,
      error: 'HTTP 404',
    });
  });
});
