import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished } from 'vitest';
import { systemResolver, type HostResolver } from '@agent-platform/kit/security';
import { createWebhook, dispatcherTest, expectError, newTenant, waitForDeliveries } from './support/harness.js';

// DNS under the test's control for names under .example.com; the system's for the rest (localhost).
const dns = new Map<string, LookupAddress[]>();
const resolveHost: HostResolver = (hostname) => {
  const answer = dns.get(hostname);
  return answer ? Promise.resolve(answer) : systemResolver(hostname);
};
const PUBLIC: LookupAddress[] = [{ address: '93.184.216.34', family: 4 }];
const LOOPBACK: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }];

const test = dispatcherTest({ env: { ALLOW_PRIVATE_NETWORK_URLS: 'false', WEBHOOK_TIMEOUT_MS: '2000' }, resolveHost });

/** A TCP listener on loopback that only counts connections: proof of whether anything was sent. */
async function loopbackListener(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

describe('SSRF guard at creation', () => {
  test.for([
    ['https://127.0.0.1/hook', /loopback address \(127\.0\.0\.1\)/],
    ['https://10.0.0.1/hook', /private network address \(10\.0\.0\.1\)/],
    ['https://169.254.169.254/latest/meta-data/', /cloud metadata address \(169\.254\.169\.254\)/],
    ['https://[::1]:8443/hook', /loopback address \(::1\)/],
    ['https://[::ffff:10.0.0.1]/hook', /private network address/],
    ['https://localhost/hook', /loopback address/],
    ['http://hooks.example.com/hook', /must be an https URL/],
  ] as const)('refuses %s', async ([url, problem], { dispatcher }) => {
    dns.set('hooks.example.com', PUBLIC);
    const tenant = newTenant();
    const error = await expectError(dispatcher.client.createWebhook({ url, events: ['*'] }, { principal: tenant.principal }), 'validation_error');
    expect(error.details).toHaveLength(1);
    expect(error.details[0]!.field).toBe('url');
    expect(error.details[0]!.message).toMatch(problem);
  });

  test('refuses a name with any private address, and accepts public ones', async ({ dispatcher }) => {
    const tenant = newTenant();
    dns.set('mixed.example.com', [...PUBLIC, { address: '192.168.0.10', family: 4 }]);
    dns.set('public.example.com', PUBLIC);
    const error = await expectError(dispatcher.client.createWebhook({ url: 'https://mixed.example.com/h', events: ['*'] }, { principal: tenant.principal }), 'validation_error');
    expect(error.details[0]).toMatchObject({ field: 'url', message: expect.stringMatching(/192\.168\.0\.10/) });
    const { webhook } = await createWebhook(dispatcher.client, tenant, 'https://public.example.com/h');
    dns.set('public.example.com', LOOPBACK);
    const moved = await expectError(
      dispatcher.client.updateWebhook({ webhookId: webhook.id, url: 'https://public.example.com/v2', setEvents: false, events: [] }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(moved.details.map((d) => d.field)).toEqual(['url']);
  });
});

describe('SSRF guard at connect time (DNS rebinding)', () => {
  test('a name that turned private is refused before connecting: the attempt fails, nothing is sent', async ({ dispatcher }) => {
    const listener = await loopbackListener();
    const tenant = newTenant();
    dns.set('rebind.example.com', PUBLIC);
    const { webhook } = await createWebhook(dispatcher.client, tenant, `https://rebind.example.com:${listener.port}/hook`);
    dns.set('rebind.example.com', LOOPBACK);

    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: false, responseStatus: 0 });
    expect(outcome.error).toMatch(/refused to connect: rebind\.example\.com must not point to a loopback address \(127\.0\.0\.1\)/);

    await dispatcher.publish(tenant.tenantId, 'agent.updated');
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      const queued = items.find((d) => d.eventType === 'agent.updated');
      expect(queued?.attemptLog[0]).toMatchObject({ number: 1, outcome: 'failed', responseStatus: 0, error: expect.stringMatching(/refused to connect/) });
    });
    expect(listener.connections()).toBe(0);
  });
});
