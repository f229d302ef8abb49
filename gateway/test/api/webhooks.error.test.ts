import { DomainError } from '@agent-platform/kit';
import type { GetDeliveryResponse, GetWebhookResponse } from '@agent-platform/proto/webhooks/v1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { as, expectError, newAccount, newWebhook, startHarness, type Account, type Harness } from '../support/harness.js';

// Loopback URLs need the development allowance (the https-only and private-address rules are the
// dispatcher's own, tested in services/webhook-dispatcher/test/ssrf.test.ts). Port 9 (discard)
// has no listener: nothing in this file is meant to be delivered.
const valid = { url: 'http://127.0.0.1:9/hooks', events: ['agent.created'] };

let h: Harness;
let account: Account;
let webhookId: string;
beforeAll(async () => {
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
  account = await newAccount(h.app);
  webhookId = (await newWebhook(h.app, account.token, valid)).id;
});
afterEach(() => {
  h.webhooks.heal();
});
afterAll(async () => {
  await h.close();
});
const json = { 'content-type': 'application/json' };

/** Calls of the dispatcher so far: requests the gateway refuses must not reach it. */
const dispatched = () => h.webhooks.calls.length;

describe('422 validation_error from the gateway, naming each field', () => {
  it.each([
    ['nothing', {}, ['url', 'events']],
    ['a url that is not a URL', { ...valid, url: '127.0.0.1:9/hooks' }, ['url']],
    ['a url that is not a string', { ...valid, url: 42 }, ['url']],
    ['events that are not an array', { ...valid, events: 'agent.created' }, ['events']],
    ['no events', { ...valid, events: [] }, ['events']],
    ['an event that is not a string', { ...valid, events: ['agent.created', 7] }, ['events[1]']],
    ['a secret that is not a string', { ...valid, secret: 1234567890123456 }, ['secret']],
    ['metadata that is an array', { ...valid, metadata: ['a'] }, ['metadata']],
    ['metadata that is text', { ...valid, metadata: '{"a":1}' }, ['metadata']],
    ['metadata that is null', { ...valid, metadata: null }, ['metadata']],
    ['a description that is not a string', { ...valid, description: { text: 'x' } }, ['description']],
  ])('creating with %s', async (_label, payload, fields) => {
    const before = dispatched();
    const body = expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload }), 422, 'validation_error', fields);
    expect(body.details?.every((detail) => detail.message.length > 0)).toBe(true);
    expect(dispatched()).toBe(before);
  });

  it('says Required for a missing url', async () => {
    const body = expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload: { events: ['*'] } }), 422, 'validation_error', ['url']);
    expect(body.details?.[0]?.message).toBe('is required');
  });

  it.each([
    ['an empty events list', { events: [] }, ['events']],
    ['a url that is not a URL', { url: 'nope' }, ['url']],
    ['metadata that is not an object', { metadata: 5 }, ['metadata']],
    ['several bad fields', { url: 1, events: [null], description: false }, ['url', 'events[0]', 'description']],
  ])('updating with %s', async (_label, payload, fields) => {
    const before = dispatched();
    expectError(await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/webhooks/${webhookId}`, payload }), 422, 'validation_error', fields);
    expect(dispatched()).toBe(before);
  });

  it.each([
    ['no event_type', {}],
    ['an event_type that is not a string', { event_type: ['agent.created'] }],
  ])('testing with %s', async (_label, payload) => {
    const before = dispatched();
    expectError(await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhookId}/test`, payload }), 422, 'validation_error', ['event_type']);
    expect(dispatched()).toBe(before);
  });

  it('for out-of-range paging, limit and an empty cursor', async () => {
    const before = dispatched();
    const deliveries = `/api/v1/webhooks/${webhookId}/deliveries`;
    expectError(await as(h.app, account.token, { method: 'GET', url: deliveries, query: { limit: '0' } }), 422, 'validation_error', ['limit']);
    expectError(await as(h.app, account.token, { method: 'GET', url: deliveries, query: { limit: '101' } }), 422, 'validation_error', ['limit']);
    expectError(await as(h.app, account.token, { method: 'GET', url: deliveries, query: { cursor: '' } }), 422, 'validation_error', ['cursor']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks', query: { per_page: '101' } }), 422, 'validation_error', ['per_page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks', query: { page: '0' } }), 422, 'validation_error', ['page']);
    expect(dispatched()).toBe(before);
  });
});

describe('400 invalid_request', () => {
  it('for malformed JSON, a body that is not an object and a text body', async () => {
    const before = dispatched();
    for (const url of ['/api/v1/webhooks', `/api/v1/webhooks/${webhookId}/test`]) {
      expectError(await as(h.app, account.token, { method: 'POST', url, headers: json, payload: '{"url": ' }), 400, 'invalid_request');
      expectError(await as(h.app, account.token, { method: 'POST', url, headers: json, payload: '["http://127.0.0.1:9/hooks"]' }), 400, 'invalid_request');
      expectError(await as(h.app, account.token, { method: 'POST', url, headers: { 'content-type': 'text/plain' }, payload: 'url=x' }), 400, 'invalid_request');
    }
    const patch = `/api/v1/webhooks/${webhookId}`;
    expectError(await as(h.app, account.token, { method: 'PATCH', url: patch, headers: json, payload: '{' }), 400, 'invalid_request');
    expectError(await as(h.app, account.token, { method: 'PATCH', url: patch }), 400, 'invalid_request');
    expect(dispatched()).toBe(before);
  });

  it('for a limit that is not a number, naming it', async () => {
    const before = dispatched();
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries?limit=ten` }), 400, 'invalid_request', ['limit']);
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries?cursor=a&cursor=b` }), 400, 'invalid_request', ['cursor']);
    expect(dispatched()).toBe(before);
  });
});

describe("the dispatcher's verdicts, passed through the kit mapping", () => {
  it.each([
    ['a url of another scheme', { ...valid, url: 'ftp://127.0.0.1/hooks' }, ['url'], /http or https/],
    ['names that are not event types', { ...valid, events: ['agent.created', 'agent.message', 'workflow.completed'] }, ['events[1]', 'events[2]'], /not an event type/],
    ['"*" among other types', { ...valid, events: ['*', 'agent.created'] }, ['events[0]'], /alone/],
    ['a short secret', { ...valid, secret: 'short' }, ['secret'], /16 to 128 printable/],
  ])('422 on creating with %s, with its details', async (_label, payload, fields, message) => {
    const before = dispatched();
    const body = expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload }), 422, 'validation_error', fields);
    for (const detail of body.details ?? []) expect(detail.message).toMatch(message);
    // The dispatcher decided: the request reached it, and nothing was created.
    expect(dispatched()).toBe(before + 1);
    expect((await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' })).json()).toMatchObject({ total: 1 });
  });

  it('422 on an update or test the dispatcher refuses, and the webhook stays as it was', async () => {
    const credentials = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/webhooks/${webhookId}`, payload: { url: 'http://user:secret@127.0.0.1:9/hooks' } });
    expect(expectError(credentials, 422, 'validation_error', ['url']).details).toEqual([{ field: 'url', message: 'must not contain credentials' }]);
    expect((await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}` })).json()).toMatchObject({ url: valid.url });
    const unknown = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhookId}/test`, payload: { event_type: 'workflow.completed' } });
    expectError(unknown, 422, 'validation_error', ['event_type']);
    expect((await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries` })).json()).toMatchObject({ items: [], total: 0 });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries`, query: { cursor: 'bogus' } }), 422, 'validation_error', ['cursor']);
  });

  it('404 not_found for an unknown webhook on every route, and an unknown delivery', async () => {
    const missing = 'wh_01HZZZZZZZZZZZZZZZZZZZZZZZ';
    const base = `/api/v1/webhooks/${missing}`;
    const routes = [
      { method: 'GET' as const, url: base },
      { method: 'PATCH' as const, url: base, payload: { description: 'x' } },
      { method: 'DELETE' as const, url: base },
      { method: 'POST' as const, url: `${base}/enable` },
      { method: 'POST' as const, url: `${base}/rotate-secret` },
      { method: 'POST' as const, url: `${base}/test`, payload: { event_type: 'agent.created' } },
      { method: 'GET' as const, url: `${base}/deliveries` },
      { method: 'POST' as const, url: `${base}/deliveries/dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ/retry` },
      { method: 'POST' as const, url: `/api/v1/webhooks/${webhookId}/deliveries/dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ/retry` },
      { method: 'GET' as const, url: `${base}/deliveries/dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ` },
      { method: 'GET' as const, url: `/api/v1/webhooks/${webhookId}/deliveries/dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ` },
    ];
    for (const route of routes) {
      const body = expectError(await as(h.app, account.token, route), 404, 'not_found');
      expect(body.message, `${route.method} ${route.url}`).toMatch(/not found/);
    }
  });

  it('500 internal_error, masked, for an unexpected dispatcher failure or a malformed answer', async () => {
    h.webhooks.inject('GetWebhook', { fail: new Error('database password is hunter2') });
    const failed = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}` });
    expect(expectError(failed, 500, 'internal_error').message).toBe('An unexpected error occurred.');
    expect(failed.body).not.toContain('hunter2');

    const at = new Date();
    const webhook = { id: webhookId, url: valid.url, events: valid.events, status: 'active', metadataJson: '[1,2]', createdAt: at, updatedAt: at };
    h.webhooks.inject('GetWebhook', { answer: { webhook } satisfies GetWebhookResponse });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}` }), 500, 'internal_error');

    const attempt = { number: 1, startedAt: undefined, responseStatus: 500, responseTimeMs: 3, outcome: 'failed' };
    const delivery = { id: 'dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ', webhookId, eventId: 'evt_01HZZZZZZZZZZZZZZZZZZZZZZZ', eventType: 'agent.created', status: 'failed', responseStatus: 500, responseTimeMs: 3, attempts: 1, createdAt: at, attemptLog: [attempt] };
    h.webhooks.inject('GetDelivery', { answer: { delivery } satisfies GetDeliveryResponse });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries/${delivery.id}` }), 500, 'internal_error');
  });

  it('a dispatcher DomainError keeps its code: 409 conflict, 502 masked', async () => {
    h.webhooks.inject('EnableWebhook', { fail: new DomainError('conflict', 'The webhook is being deleted.') });
    const conflict = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhookId}/enable` });
    expect(expectError(conflict, 409, 'conflict').message).toBe('The webhook is being deleted.');
    h.webhooks.inject('TestWebhook', { fail: new DomainError('upstream_error', 'resolver 10.0.0.53 timed out') });
    const upstream = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhookId}/test`, payload: { event_type: 'agent.created' } });
    expect(expectError(upstream, 502, 'upstream_error').message).toBe('An upstream service failed; retry later.');
    expect(upstream.body).not.toContain('10.0.0.53');
  });
});

describe('503 service_unavailable', () => {
  it('when the dispatcher cannot be reached; the rest of the API keeps working', async () => {
    for (const method of ['ListWebhooks', 'CreateWebhook']) h.webhooks.inject(method, { down: true });
    const down = await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' });
    expect(expectError(down, 503, 'service_unavailable').message).toBe('A dependency is unavailable; retry shortly.');
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload: valid }), 503, 'service_unavailable');
    expect((await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' })).statusCode).toBe(200);
  });
});
