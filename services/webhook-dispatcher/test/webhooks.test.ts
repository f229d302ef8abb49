import { isId } from '@agent-platform/kit';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect } from 'vitest';
import { createWebhook, dispatcherTest, expectError, newTenant, principalOf } from './support/harness.js';

const test = dispatcherTest();
const URL = 'https://hooks.example.com/in';

describe('CreateWebhook', () => {
  test('returns the endpoint and a generated whsec_ signing secret', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook, signingSecret } = await dispatcher.client.createWebhook(
      { url: URL, events: ['agent.created', 'billing.credits.low'], metadataJson: '{"team":"ops","n":1}', description: ' Ops feed ' },
      { principal: tenant.principal },
    );
    expect(signingSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(isId('webhook', webhook!.id)).toBe(true);
    expect(webhook).toMatchObject({
      url: URL,
      events: ['agent.created', 'billing.credits.low'],
      status: 'active',
      metadataJson: '{"team":"ops","n":1}',
      description: 'Ops feed',
    });
    expect(webhook!.createdAt).toBeInstanceOf(Date);
  });

  test('keeps a supplied secret, and stores every secret encrypted', async ({ dispatcher }) => {
    const tenant = newTenant();
    const supplied = 'my-supplied-secret-0123456789';
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, URL, ['*'], supplied);
    expect(secret).toBe(supplied);
    const generated = await createWebhook(dispatcher.client, tenant, URL);
    const rows = await dispatcher.database.query<{ row: string }>(`select w::text as row from webhooks w where tenant_id = $1`, [tenant.tenantId]);
    expect(rows).toHaveLength(2);
    for (const { row } of rows) {
      expect(row).not.toContain(supplied);
      expect(row).not.toContain(generated.secret.slice(6));
      expect(row).toMatch(/v1:[0-9a-f]{12}:/);
    }
    const got = await dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
    expect(JSON.stringify(got)).not.toContain(supplied);
  });

  test('names each invalid field', async ({ dispatcher }) => {
    const tenant = newTenant();
    const error = await expectError(
      dispatcher.client.createWebhook(
        { url: 'ftp://x', events: ['agent.message', 'agent.created', 'workflow.completed'], secret: 'short', metadataJson: '[1,2]' },
        { principal: tenant.principal },
      ),
      'validation_error',
    );
    expect(error.details.map((d) => d.field)).toEqual(['url', 'events[0]', 'events[2]', 'secret', 'metadata']);
    const mixed = await expectError(dispatcher.client.createWebhook({ url: URL, events: ['*', 'agent.created'] }, { principal: tenant.principal }), 'validation_error');
    expect(mixed.details.map((d) => d.field)).toEqual(['events[0]']);
    const none = await expectError(dispatcher.client.createWebhook({ url: URL, events: [] }, { principal: tenant.principal }), 'validation_error');
    expect(none.details.map((d) => d.field)).toEqual(['events']);
    const big = await expectError(
      dispatcher.client.createWebhook({ url: URL, events: ['*'], metadataJson: JSON.stringify({ blob: 'x'.repeat(16 * 1024) }) }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(big.details).toEqual([{ field: 'metadata', message: 'must be at most 16384 bytes of JSON' }]);
    const list = await dispatcher.client.listWebhooks({ page: { page: 0, perPage: 0 } }, { principal: tenant.principal });
    expect(list.total).toBe(0);
  });

  test('accepts every catalogue type and deduplicates', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, URL, ['memory.consolidated', 'workflow.execution.failed', 'memory.consolidated']);
    expect(webhook.events).toEqual(['memory.consolidated', 'workflow.execution.failed']);
  });
});

describe('List, Get, Update, Delete', () => {
  test('list newest first with page and per_page', async ({ dispatcher }) => {
    const tenant = newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await createWebhook(dispatcher.client, tenant, `${URL}/${i}`)).webhook.id);
    const first = await dispatcher.client.listWebhooks({ page: { page: 1, perPage: 2 } }, { principal: tenant.principal });
    expect(first.total).toBe(5);
    expect(first.items.map((w) => w.id)).toEqual([ids[4], ids[3]]);
    const last = await dispatcher.client.listWebhooks({ page: { page: 3, perPage: 2 } }, { principal: tenant.principal });
    expect(last.items.map((w) => w.id)).toEqual([ids[0]]);
    const invalid = await expectError(dispatcher.client.listWebhooks({ page: { page: 1, perPage: 101 } }, { principal: tenant.principal }), 'validation_error');
    expect(invalid.details.map((d) => d.field)).toEqual(['per_page']);
  });

  test('update changes only the fields present', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, URL, ['agent.created']);
    const renamed = await dispatcher.client.updateWebhook(
      { webhookId: webhook.id, setEvents: false, events: [], description: 'renamed' },
      { principal: tenant.principal },
    );
    expect(renamed.webhook).toMatchObject({ url: URL, events: ['agent.created'], description: 'renamed', metadataJson: '{}' });
    const moved = await dispatcher.client.updateWebhook(
      { webhookId: webhook.id, url: `${URL}/v2`, setEvents: true, events: ['*'], metadataJson: '{"v":2}' },
      { principal: tenant.principal },
    );
    expect(moved.webhook).toMatchObject({ url: `${URL}/v2`, events: ['*'], description: 'renamed', metadataJson: '{"v":2}' });
    expect(moved.webhook!.updatedAt!.getTime()).toBeGreaterThanOrEqual(webhook.updatedAt!.getTime());
    const bad = await expectError(
      dispatcher.client.updateWebhook({ webhookId: webhook.id, setEvents: true, events: [], url: 'ftp://example.com/x' }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(bad.details.map((d) => d.field)).toEqual(['url', 'events']);
    const unchanged = await dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
    expect(unchanged.webhook).toMatchObject({ url: `${URL}/v2`, events: ['*'] });
  });

  test('delete removes the endpoint and its delivery log', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, 'http://127.0.0.1:9/unused');
    await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    await dispatcher.client.deleteWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
    await expectError(dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal }), 'not_found');
    await expectError(dispatcher.client.deleteWebhook({ webhookId: webhook.id }, { principal: tenant.principal }), 'not_found');
    const rows = await dispatcher.database.query('select id from webhook_deliveries where webhook_id = $1', [webhook.id]);
    expect(rows).toEqual([]);
  });
});

describe('RotateSecret and EnableWebhook', () => {
  test('rotation returns a new secret and enable is idempotent on an active endpoint', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, URL);
    const rotated = await dispatcher.client.rotateSecret({ webhookId: webhook.id }, { principal: tenant.principal });
    expect(rotated.signingSecret).toMatch(/^whsec_/);
    expect(rotated.signingSecret).not.toBe(secret);
    const enabled = await dispatcher.client.enableWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
    expect(enabled.webhook).toMatchObject({ id: webhook.id, status: 'active' });
  });
});

describe('tenancy and access', () => {
  test('another tenant sees none of it: every call answers not_found', async ({ dispatcher }) => {
    const owner = newTenant();
    const stranger = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, owner, URL);
    const sent = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: owner.principal });
    const as = { principal: stranger.principal };
    const webhookId = webhook.id;
    await expectError(dispatcher.client.getWebhook({ webhookId }, as), 'not_found');
    await expectError(dispatcher.client.updateWebhook({ webhookId, setEvents: false, events: [], description: 'x' }, as), 'not_found');
    await expectError(dispatcher.client.updateWebhook({ webhookId, setEvents: true, events: [] }, as), 'not_found');
    await expectError(dispatcher.client.enableWebhook({ webhookId }, as), 'not_found');
    await expectError(dispatcher.client.rotateSecret({ webhookId }, as), 'not_found');
    await expectError(dispatcher.client.testWebhook({ webhookId, eventType: 'agent.created' }, as), 'not_found');
    await expectError(dispatcher.client.listDeliveries({ webhookId, page: { limit: 10 } }, as), 'not_found');
    await expectError(dispatcher.client.getDelivery({ webhookId, deliveryId: sent.deliveryId }, as), 'not_found');
    await expectError(dispatcher.client.retryDelivery({ webhookId, deliveryId: sent.deliveryId }, as), 'not_found');
    await expectError(dispatcher.client.deleteWebhook({ webhookId }, as), 'not_found');
    expect((await dispatcher.client.listWebhooks({ page: { page: 1, perPage: 100 } }, as)).total).toBe(0);
    // Still there, untouched, for its owner.
    const mine = await dispatcher.client.getWebhook({ webhookId }, { principal: owner.principal });
    expect(mine.webhook).toMatchObject({ id: webhookId, url: URL, description: undefined });
    expect((await dispatcher.client.listDeliveries({ webhookId, page: { limit: 10 } }, { principal: owner.principal })).total).toBe(1);
  });

  test('reading needs any role; managing needs admin; keys need the webhooks scopes', async ({ dispatcher }) => {
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, URL);
    const viewer = { principal: principalOf(tenant.tenantId, 'viewer') };
    expect((await dispatcher.client.getWebhook({ webhookId: webhook.id }, viewer)).webhook?.id).toBe(webhook.id);
    await expectError(dispatcher.client.createWebhook({ url: URL, events: ['*'] }, viewer), 'forbidden');
    await expectError(dispatcher.client.rotateSecret({ webhookId: webhook.id }, { principal: principalOf(tenant.tenantId, 'member') }), 'forbidden');

    const readKey = { principal: principalOf(tenant.tenantId, 'owner', PrincipalKind.KIND_API_KEY, ['webhooks:read']) };
    expect((await dispatcher.client.listWebhooks({ page: { page: 1, perPage: 10 } }, readKey)).total).toBe(1);
    await expectError(dispatcher.client.deleteWebhook({ webhookId: webhook.id }, readKey), 'forbidden');
    const writeKey = { principal: principalOf(tenant.tenantId, 'admin', PrincipalKind.KIND_API_KEY, ['webhooks:write']) };
    await dispatcher.client.enableWebhook({ webhookId: webhook.id }, writeKey);
    await expectError(dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: principalOf(tenant.tenantId, 'owner', PrincipalKind.KIND_API_KEY, ['agents:read']) }), 'forbidden');
    await expectError(dispatcher.client.getWebhook({ webhookId: webhook.id }), 'unauthorized');
  });
});
