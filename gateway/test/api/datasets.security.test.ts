import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDatasetItems, datasetItem, newDataset } from '../support/datasets.js';
import { addMember, as, expectError, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('datasets security', () => {
  it('viewers read datasets and their items; they cannot create, add, or delete', async () => {
    const owner = await newAccount(h.app);
    const viewer = await newAccount(h.app);
    await addMember(h.app, owner, viewer, 'viewer');
    const dataset = await newDataset(h.app, owner.token);
    const [item] = await addDatasetItems(h.app, owner.token, dataset.id, [datasetItem(1)]);
    const query = { tenant_id: owner.tenantId };
    const url = `/api/v1/datasets/${dataset.id}`;
    expect((await as(h.app, viewer.token, { method: 'GET', url: '/api/v1/datasets', query })).json<{ total: number }>().total).toBe(1);
    expect((await as(h.app, viewer.token, { method: 'GET', url, query })).statusCode).toBe(200);
    expect((await as(h.app, viewer.token, { method: 'GET', url: `${url}/items`, query })).json<{ total: number }>().total).toBe(1);
    expectError(await as(h.app, viewer.token, { method: 'POST', url: '/api/v1/datasets', query, payload: { name: 'Mine' } }), 403, 'forbidden');
    expectError(await as(h.app, viewer.token, { method: 'POST', url: `${url}/items`, query, payload: datasetItem(2) }), 403, 'forbidden');
    expectError(await as(h.app, viewer.token, { method: 'DELETE', url: `${url}/items/${item!.id}`, query }), 403, 'forbidden');
    expectError(await as(h.app, viewer.token, { method: 'DELETE', url, query }), 403, 'forbidden');
    // Nothing changed.
    expect((await as(h.app, owner.token, { method: 'GET', url })).json<{ item_count: number }>().item_count).toBe(1);
  });

  it('a key with agents:read cannot write; one with only other scopes cannot read', async () => {
    const owner = await newAccount(h.app);
    const dataset = await newDataset(h.app, owner.token);
    const reader = await newApiKey(h.app, owner, ['agents:read', 'tools:write', 'memory:write']);
    expectError(await as(h.app, reader.key, { method: 'POST', url: '/api/v1/datasets', payload: { name: 'Mine' } }), 403, 'forbidden');
    expectError(await as(h.app, reader.key, { method: 'POST', url: `/api/v1/datasets/${dataset.id}/items`, payload: datasetItem(1) }), 403, 'forbidden');
    expectError(await as(h.app, reader.key, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}` }), 403, 'forbidden');
    expect((await as(h.app, reader.key, { method: 'GET', url: `/api/v1/datasets/${dataset.id}` })).statusCode).toBe(200);
    const toolsOnly = await newApiKey(h.app, owner, ['tools:read']);
    expectError(await as(h.app, toolsOnly.key, { method: 'GET', url: '/api/v1/datasets' }), 403, 'forbidden');
  });

  it("another tenant's dataset is 404 for every operation, and never listed", async () => {
    const owner = await newAccount(h.app);
    const stranger = await newAccount(h.app);
    const dataset = await newDataset(h.app, owner.token);
    const [item] = await addDatasetItems(h.app, owner.token, dataset.id, [datasetItem(1)]);
    const url = `/api/v1/datasets/${dataset.id}`;
    expectError(await as(h.app, stranger.token, { method: 'GET', url }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'GET', url: `${url}/items` }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'POST', url: `${url}/items`, payload: datasetItem(2) }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'DELETE', url: `${url}/items/${item!.id}` }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'DELETE', url }), 404, 'not_found');
    expect((await as(h.app, stranger.token, { method: 'GET', url: '/api/v1/datasets' })).json<{ total: number }>().total).toBe(0);
    expect((await as(h.app, owner.token, { method: 'GET', url })).json<{ item_count: number }>().item_count).toBe(1);
  });
});
