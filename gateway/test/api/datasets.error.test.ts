import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetItem, newDataset, type DatasetBody } from '../support/datasets.js';
import { as, expectError, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** Sends `payload` to the dataset's items; the dataset must hold none afterwards. */
async function refusedItems(account: Account, dataset: DatasetBody, payload: unknown, fields: string[]): Promise<void> {
  const url = `/api/v1/datasets/${dataset.id}/items`;
  expectError(await as(h.app, account.token, { method: 'POST', url, payload: payload as Record<string, unknown> }), 422, 'validation_error', fields);
  const listed = await as(h.app, account.token, { method: 'GET', url });
  expect(listed.json()).toMatchObject({ items: [], total: 0 });
  const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/datasets/${dataset.id}` });
  expect(read.json<DatasetBody>().item_count).toBe(0);
}

describe('dataset items refused', () => {
  it('1,001 items in one call: none is stored', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    await refusedItems(account, dataset, { items: Array.from({ length: 1_001 }, (_, index) => datasetItem(index)) }, ['items']);
    await refusedItems(account, dataset, { items: [] }, ['items']);
  });

  it('one faulty item refuses the whole batch, each fault named by its position', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    const items = Array.from({ length: 5 }, (_, index) => datasetItem(index));
    // Blank: the service's rule, named as the gateway would name it.
    items[3] = datasetItem(3, { input: { message: '   ' } });
    await refusedItems(account, dataset, { items }, ['items[3].input.message']);
    // Over the bound and of the wrong type: the gateway's schema.
    items[1] = datasetItem(1, { input: { message: 'x'.repeat(32_001) }, metadata: ['not', 'an', 'object'] });
    items[3] = datasetItem(3);
    await refusedItems(account, dataset, { items }, ['items[1].input.message', 'items[1].metadata']);
    // An end user the service refuses (a control character).
    items[1] = datasetItem(1, { input: { message: 'Hi', user_id: 'ana\u0007' } });
    await refusedItems(account, dataset, { items }, ['items[1].input.user_id']);
  });

  it('one item is named by its own fields', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    await refusedItems(account, dataset, { input: { message: ' ' }, expected: 'x'.repeat(32_001) }, ['expected']);
    await refusedItems(account, dataset, { input: { message: ' ' } }, ['input.message']);
    await refusedItems(account, dataset, { input: {} }, ['input.message']);
  });

  it('one item or a batch, not both nor neither; a batch carries expected and metadata per item', async () => {
    const account = await newAccount(h.app);
    const dataset = await newDataset(h.app, account.token);
    await refusedItems(account, dataset, {}, ['input']);
    await refusedItems(account, dataset, { ...datasetItem(1), items: [datasetItem(2)] }, ['input']);
    await refusedItems(account, dataset, { items: [datasetItem(2)], expected: 'Answer' }, ['expected']);
  });

  it('a name that is blank or too long, and a cursor the list did not issue', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/datasets', payload: { name: '  ', description: 'x'.repeat(2_001) } }), 422, 'validation_error', [
      'description',
      'name',
    ]);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/datasets', payload: {} }), 422, 'validation_error', ['name']);
    const dataset = await newDataset(h.app, account.token);
    const url = `/api/v1/datasets/${dataset.id}/items`;
    expectError(await as(h.app, account.token, { method: 'GET', url, query: { cursor: 'bm90LWEtY3Vyc29y' } }), 422, 'validation_error', ['cursor']);
    expectError(await as(h.app, account.token, { method: 'GET', url, query: { limit: '101' } }), 422, 'validation_error', ['limit']);
  });

  it('an unknown dataset is 404', async () => {
    const account = await newAccount(h.app);
    const url = '/api/v1/datasets/ds_01JD0000000000000000000000';
    expectError(await as(h.app, account.token, { method: 'GET', url }), 404, 'not_found');
    expectError(await as(h.app, account.token, { method: 'POST', url: `${url}/items`, payload: datasetItem(1) }), 404, 'not_found');
  });
});
