import { startReceiver } from '@agent-platform/kit/testing';
import { startSmtpPeer } from './support/smtp-peer.js';
import { describe, expect } from 'vitest';
import { databaseTest, newTenant, startRunner, statusesOf } from './support/harness.js';

describe('integration nodes through the runner', { timeout: 30_000 }, () => {
  databaseTest('an http node to a private address without the allowance fails with the reason, and no request leaves', async ({ database, onTestFinished }) => {
    const peer = await startReceiver();
    const port = peer.port;
    const runner = await startRunner(database, { ALLOW_PRIVATE_NETWORK_URLS: 'false' });
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: `http://${host}/secret`, method: 'GET' } }] });
      const execution = await runner.runSync(tenant, workflow.id);
      expect(execution.status).toBe('failed');
      expect(execution.error?.nodeId).toBe('call');
      expect(execution.error?.message).toMatch(/https|loopback/);
    }
    // The node has failed, so its request would have been sent by now: none was.
    expect(peer.requests).toHaveLength(0);
    expect(peer.connections()).toBe(0);
  });

  databaseTest('an email node sends through the configured SMTP server, templates rendered', async ({ database, onTestFinished }) => {
    const smtp = await startSmtpPeer();
    onTestFinished(() => smtp.close());
    const { received } = smtp;
    const runner = await startRunner(database, { ...smtp.env, SMTP_FROM: 'flows@example.com' });
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [{ id: 'mail', type: 'integration', config: { service: 'email', to: ['ops@example.com', '{{ input.owner }}'], subject: 'Order {{ input.id }}', text: 'Total: {{ input.total }}' } }],
    });
    const execution = await runner.runSync(tenant, workflow.id, { id: 'A-1', total: 42, owner: 'ann@example.com' });
    expect(execution.status, execution.error?.message).toBe('completed');
    expect(statusesOf(execution)).toEqual({ mail: 'completed' });
    expect(JSON.parse(execution.outputJson ?? 'null')).toMatchObject({ message_id: expect.any(String), accepted: ['ops@example.com', 'ann@example.com'] });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ from: 'flows@example.com', to: ['ops@example.com', 'ann@example.com'] });
    expect(received[0]?.data).toContain('Subject: Order A-1');
    expect(received[0]?.data).toContain('Total: 42');
  });

  databaseTest('an email node fails saying so when no SMTP server is configured', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'mail', type: 'integration', config: { service: 'email', to: 'ops@example.com', subject: 's', text: 't' } }] });
    const execution = await runner.runSync(tenant, workflow.id);
    expect(execution.status).toBe('failed');
    expect(execution.error?.message).toContain('SMTP_HOST');
  });
});
