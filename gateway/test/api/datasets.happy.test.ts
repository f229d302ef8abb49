import { PrincipalKind } from '@agent-platform/kit/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCall, principalOf } from '../support/calls.js';
import { addDatasetItems, datasetItem, newDataset, type DatasetBody, type DatasetItemBody } from '../support/datasets.js';
import { as, expectError, ISO_MS, matching, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const DATASET_ID = /^ds_[0-9A-HJKMNP-TV-Z]{26}$/;
const ITEM_ID = /^dsi_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('datasets', () => {
  it('are created, read, listed newest first and deleted, acting as the caller', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/datasets', payload: { name: 'Refund questions', description: 'What customers ask.' } });
    expect(created.statusCode, created.body).toBe(201);
    const dataset = created.json<DatasetBody>();
    expect(dataset).toEqual({
      id: matching(DATASET_ID),
      name: 'Refund questions',
      description: 'What customers ask.',
      item_count: 0,
      created_at: matching(ISO_MS),
      updated_at: dataset.created_at,
    });
    expect(principalOf(lastCall(h.agentMemory, 'CreateDataset'))).toMatchObject({ kind: PrincipalKind.KIND_USER, userId: account.userId, tenantId: account.tenantId });

    const second = await newDataset(h.app, account.token, { name: 'Shipping' });
    expect(second.description).toBeNull();
    const got = await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}` });
    expect(got.json()).toEqual(dataset);
    const page = await as(h.app, account.token, { method: 'GET', url: '/api/v1/datasets', query: { per_page: '1' } });
    expect(page.json()).toEqual({ items: [second], total: 2, page: 1, per_page: 1 });

    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}` });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toMatchObject({ success: true });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}` }), 404, 'not_found');
  });

  it('take one item and answer it; a batch answers {items}', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    const url = `/api/v1/datasets/${dataset.id}/items`;
    const one = await as(h.app, account.token, {
      method: 'POST',
      url,
      payload: { input: { message: 'Can I get a refund after 40 days?', user_id: 'customer-8812' }, expected: 'No.', metadata: { topic: 'refunds' } },
    });
    expect(one.statusCode, one.body).toBe(201);
    const item = one.json<DatasetItemBody>();
    expect(item).toEqual({
      id: matching(ITEM_ID),
      dataset_id: dataset.id,
      input: { message: 'Can I get a refund after 40 days?', user_id: 'customer-8812' },
      expected: 'No.',
      metadata: { topic: 'refunds' },
      created_at: matching(ISO_MS),
    });

    const batch = await as(h.app, account.token, { method: 'POST', url, payload: { items: [{ input: { message: 'Hello' } }, datasetItem(2)] } });
    expect(batch.statusCode, batch.body).toBe(201);
    const { items } = batch.json<{ items: DatasetItemBody[] }>();
    expect(items.map((added) => added.input)).toEqual([{ message: 'Hello', user_id: null }, { message: 'Question 2', user_id: null }]);
    expect(items[0]).toMatchObject({ expected: null, metadata: null });

    const listed = await as(h.app, account.token, { method: 'GET', url });
    expect(listed.json()).toEqual({ items: [...items].reverse().concat(item), total: 3, next_cursor: null });
    const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}` });
    expect(read.json<DatasetBody>().item_count).toBe(3);
  });

  it('take 1,000 items in one call, read back page by page', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    const added = await addDatasetItems(h.app, account.token, dataset.id, Array.from({ length: 1_000 }, (_, index) => datasetItem(index)));
    expect(added).toHaveLength(1_000);
    expect(added[999]!.input.message).toBe('Question 999');

    const read: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}/items`, query: { limit: '100', ...(cursor ? { cursor } : {}) } });
      expect(page.statusCode, page.body).toBe(200);
      const body = page.json<{ items: DatasetItemBody[]; total: number; next_cursor: string | null }>();
      expect(body.total).toBe(1_000);
      read.push(...body.items.map((one) => one.id));
      cursor = body.next_cursor;
    } while (cursor !== null);
    expect(read).toEqual(added.map((one) => one.id).reverse());
  });

  it('lose one item, or all of them with the dataset', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    const [kept, removed] = await addDatasetItems(h.app, account.token, dataset.id, [datasetItem(1), datasetItem(2)]);
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}/items/${removed!.id}` });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expectError(await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}/items/${removed!.id}` }), 404, 'not_found');
    const listed = await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}/items` });
    expect(listed.json<{ items: DatasetItemBody[]; total: number }>()).toMatchObject({ items: [kept], total: 1 });

    expect((await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}` })).statusCode).toBe(200);
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}/items` }), 404, 'not_found');
    expectError(await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/datasets/${dataset.id}/items/${kept!.id}` }), 404, 'not_found');
  });

  it('accept an API key with agents:write, and read with agents:read', async () => {
    const account = await newAccount(h.app);
    const writer = await newApiKey(h.app, account, ['agents:write']);
    const dataset = await newDataset(h.app, writer.key);
    await addDatasetItems(h.app, writer.key, dataset.id, [datasetItem(1)]);
    const reader = await newApiKey(h.app, account, ['agents:read']);
    const read = await as(h.app, reader.key, { method: 'GET', url: `/api/v1/datasets/${dataset.id}/items` });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json<{ total: number }>().total).toBe(1);
  });
});
