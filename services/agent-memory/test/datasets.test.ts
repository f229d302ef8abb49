import { PrincipalKind } from '@agent-platform/kit/grpc';
import type { DatasetItem, NewDatasetItem } from '@agent-platform/proto/agents/v1/datasets';
import { describe, expect } from 'vitest';
import { agentMemoryTest, expectError, newTenant, principalOf, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

const test = agentMemoryTest();

const DATASET_ID = /^ds_[0-9A-HJKMNP-TV-Z]{26}$/;
const ITEM_ID = /^dsi_[0-9A-HJKMNP-TV-Z]{26}$/;

async function createDataset(service: AgentMemoryHarness, tenant: TestTenant, name = 'Refund questions') {
  return (await service.datasets.createDataset({ name, description: 'What customers ask about refunds.' }, { principal: tenant.principal })).dataset!;
}

function item(index: number, overrides: Partial<NewDatasetItem> = {}): NewDatasetItem {
  return { input: { message: `Question ${index}` }, expected: `Answer ${index}`, ...overrides };
}

async function addBatch(service: AgentMemoryHarness, tenant: TestTenant, datasetId: string, items: NewDatasetItem[]): Promise<DatasetItem[]> {
  return (await service.datasets.addDatasetItems({ datasetId, batch: { items } }, { principal: tenant.principal })).items;
}

/** What the database holds of the dataset: its items' rows and its kept count. */
async function stored(service: AgentMemoryHarness, datasetId: string): Promise<{ rows: number; itemCount: number | undefined }> {
  const [rows] = await service.database.query<{ count: string }>(`select count(*) as "count" from "dataset_items" where "dataset_id" = $1`, [datasetId]);
  const [dataset] = await service.database.query<{ item_count: number }>(`select "item_count" from "datasets" where "id" = $1`, [datasetId]);
  return { rows: Number(rows!.count), itemCount: dataset?.item_count };
}

describe('datasets', () => {
  test('are created, read, listed newest first and deleted', async ({ service }) => {
    const tenant = newTenant();
    const first = await createDataset(service, tenant, 'First');
    expect(first).toMatchObject({ name: 'First', description: 'What customers ask about refunds.', itemCount: 0 });
    expect(first.id).toMatch(DATASET_ID);
    expect(first.updatedAt).toEqual(first.createdAt);
    const second = (await service.datasets.createDataset({ name: '  Second  ' }, { principal: tenant.principal })).dataset!;
    expect(second).toMatchObject({ name: 'Second', description: undefined });

    expect((await service.datasets.getDataset({ datasetId: first.id }, { principal: tenant.principal })).dataset).toEqual(first);
    const listed = await service.datasets.listDatasets({ page: { page: 1, perPage: 1 } }, { principal: tenant.principal });
    expect(listed.total).toBe(2);
    expect(listed.datasets.map((dataset) => dataset.id)).toEqual([second.id]);
    const next = await service.datasets.listDatasets({ page: { page: 2, perPage: 1 } }, { principal: tenant.principal });
    expect(next.datasets.map((dataset) => dataset.id)).toEqual([first.id]);

    await service.datasets.deleteDataset({ datasetId: first.id }, { principal: tenant.principal });
    await expectError(service.datasets.getDataset({ datasetId: first.id }, { principal: tenant.principal }), 'not_found');
    await expectError(service.datasets.deleteDataset({ datasetId: first.id }, { principal: tenant.principal }), 'not_found');
    expect((await service.datasets.listDatasets({ page: undefined }, { principal: tenant.principal })).total).toBe(1);
  });

  test('a name is 1 to 200 characters, not blank; a description at most 2,000', async ({ service }) => {
    const tenant = newTenant();
    const error = await expectError(service.datasets.createDataset({ name: '   ', description: 'x'.repeat(2_001) }, { principal: tenant.principal }), 'validation_error');
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['description', 'name']);
    await expectError(service.datasets.createDataset({ name: 'x'.repeat(201) }, { principal: tenant.principal }), 'validation_error');
  });

  test('one item is stored as sent and counted into its dataset', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const sent: NewDatasetItem = { input: { message: 'Can I get a refund after 40 days?', userId: 'customer-8812' }, expected: 'No: refunds are within 30 days.', metadataJson: '{"topic":"refunds"}' };
    const { items } = await service.datasets.addDatasetItems({ datasetId: dataset.id, item: sent }, { principal: tenant.principal });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ datasetId: dataset.id, ...sent });
    expect(items[0]!.id).toMatch(ITEM_ID);

    const read = (await service.datasets.getDataset({ datasetId: dataset.id }, { principal: tenant.principal })).dataset!;
    expect(read.itemCount).toBe(1);
    expect(read.updatedAt!.getTime()).toBeGreaterThanOrEqual(items[0]!.createdAt!.getTime());
    const listed = await service.datasets.listDatasetItems({ datasetId: dataset.id, page: undefined }, { principal: tenant.principal });
    expect(listed).toMatchObject({ items, total: 1 });
    expect(listed.nextCursor).toBeUndefined();

    // Neither expected nor metadata nor an end user: none, not empty.
    const bare = (await service.datasets.addDatasetItems({ datasetId: dataset.id, item: { input: { message: 'Hello' } } }, { principal: tenant.principal })).items[0]!;
    expect(bare).toMatchObject({ input: { message: 'Hello', userId: undefined }, expected: undefined, metadataJson: undefined });
  });

  test('a faulty single item is named by its own fields', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const error = await expectError(
      service.datasets.addDatasetItems({ datasetId: dataset.id, item: { input: { message: ' ', userId: 'a\u0007b' }, metadataJson: '[1]' } }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['input.message', 'input.user_id', 'metadata']);
  });

  test('1,000 items are added in one call, and read back page by page, newest first', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const sent = Array.from({ length: 1_000 }, (_, index) => item(index));
    const added = await addBatch(service, tenant, dataset.id, sent);
    expect(added.map((one) => one.input!.message)).toEqual(sent.map((one) => one.input!.message));
    expect(await stored(service, dataset.id)).toEqual({ rows: 1_000, itemCount: 1_000 });

    const read: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.datasets.listDatasetItems({ datasetId: dataset.id, page: { limit: 100, cursor } }, { principal: tenant.principal });
      expect(page.total).toBe(1_000);
      read.push(...page.items.map((one) => one.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(read).toEqual(added.map((one) => one.id).reverse());
  });

  test('1,001 items are refused, and none is stored', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const error = await expectError(addBatch(service, tenant, dataset.id, Array.from({ length: 1_001 }, (_, index) => item(index))), 'validation_error');
    expect(error.details).toEqual([{ field: 'items', message: 'must hold 1 to 1,000 items' }]);
    await expectError(addBatch(service, tenant, dataset.id, []), 'validation_error');
    expect(await stored(service, dataset.id)).toEqual({ rows: 0, itemCount: 0 });
  });

  test('one faulty item refuses the whole batch, every fault named by its position', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const batch = Array.from({ length: 6 }, (_, index) => item(index));
    batch[3] = item(3, { input: { message: '   ' } });
    batch[4] = item(4, { expected: 'x'.repeat(32_001), metadataJson: 'not json' });
    batch[5] = item(5, { input: { message: 'x'.repeat(32_001), userId: 'x'.repeat(129) } });
    const error = await expectError(addBatch(service, tenant, dataset.id, batch), 'validation_error');
    expect(error.details.map((detail) => detail.field)).toEqual(['items[3].input.message', 'items[4].expected', 'items[4].metadata', 'items[5].input.message', 'items[5].input.user_id']);
    expect(await stored(service, dataset.id)).toEqual({ rows: 0, itemCount: 0 });
  });

  test('an item is deleted from its dataset alone, and uncounted', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const other = await createDataset(service, tenant, 'Other');
    const [kept, removed] = await addBatch(service, tenant, dataset.id, [item(1), item(2)]);
    // Named under another dataset of the tenant, it is not there.
    await expectError(service.datasets.deleteDatasetItem({ datasetId: other.id, itemId: removed!.id }, { principal: tenant.principal }), 'not_found');
    await service.datasets.deleteDatasetItem({ datasetId: dataset.id, itemId: removed!.id }, { principal: tenant.principal });
    await expectError(service.datasets.deleteDatasetItem({ datasetId: dataset.id, itemId: removed!.id }, { principal: tenant.principal }), 'not_found');
    expect(await stored(service, dataset.id)).toEqual({ rows: 1, itemCount: 1 });
    const listed = await service.datasets.listDatasetItems({ datasetId: dataset.id, page: undefined }, { principal: tenant.principal });
    expect(listed.items.map((one) => one.id)).toEqual([kept!.id]);
  });

  test('deleting a dataset deletes its items', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    await addBatch(service, tenant, dataset.id, [item(1), item(2), item(3)]);
    await service.datasets.deleteDataset({ datasetId: dataset.id }, { principal: tenant.principal });
    expect(await stored(service, dataset.id)).toEqual({ rows: 0, itemCount: undefined });
    await expectError(service.datasets.listDatasetItems({ datasetId: dataset.id, page: undefined }, { principal: tenant.principal }), 'not_found');
    await expectError(addBatch(service, tenant, dataset.id, [item(4)]), 'not_found');
  });

  test("another tenant's dataset is not found, whatever is asked of it", async ({ service }) => {
    const owner = newTenant();
    const stranger = newTenant();
    const dataset = await createDataset(service, owner);
    const [one] = await addBatch(service, owner, dataset.id, [item(1)]);
    const as = { principal: stranger.principal };
    await expectError(service.datasets.getDataset({ datasetId: dataset.id }, as), 'not_found');
    await expectError(service.datasets.listDatasetItems({ datasetId: dataset.id, page: undefined }, as), 'not_found');
    await expectError(service.datasets.addDatasetItems({ datasetId: dataset.id, item: item(2) }, as), 'not_found');
    await expectError(service.datasets.deleteDatasetItem({ datasetId: dataset.id, itemId: one!.id }, as), 'not_found');
    await expectError(service.datasets.deleteDataset({ datasetId: dataset.id }, as), 'not_found');
    expect((await service.datasets.listDatasets({ page: undefined }, as)).total).toBe(0);
    expect(await stored(service, dataset.id)).toEqual({ rows: 1, itemCount: 1 });
  });

  test('viewers and keys with agents:read read; writing needs a member and agents:write', async ({ service }) => {
    const member = newTenant();
    const dataset = await createDataset(service, member);
    const [one] = await addBatch(service, member, dataset.id, [item(0)]);
    const viewer = { principal: principalOf(member.tenantId, 'viewer') };
    const reader = { principal: principalOf(member.tenantId, 'admin', PrincipalKind.KIND_API_KEY, ['agents:read']) };
    for (const as of [viewer, reader]) {
      expect((await service.datasets.getDataset({ datasetId: dataset.id }, as)).dataset!.id).toBe(dataset.id);
      expect((await service.datasets.listDatasetItems({ datasetId: dataset.id, page: undefined }, as)).total).toBe(1);
      await expectError(service.datasets.createDataset({ name: 'Mine' }, as), 'forbidden');
      await expectError(service.datasets.addDatasetItems({ datasetId: dataset.id, item: item(1) }, as), 'forbidden');
      await expectError(service.datasets.deleteDatasetItem({ datasetId: dataset.id, itemId: one!.id }, as), 'forbidden');
      await expectError(service.datasets.deleteDataset({ datasetId: dataset.id }, as), 'forbidden');
    }
    expect(await stored(service, dataset.id)).toEqual({ rows: 1, itemCount: 1 });
    const toolsOnly = { principal: principalOf(member.tenantId, 'admin', PrincipalKind.KIND_API_KEY, ['tools:read']) };
    await expectError(service.datasets.listDatasets({ page: undefined }, toolsOnly), 'forbidden');
    const writer = { principal: principalOf(member.tenantId, 'member', PrincipalKind.KIND_API_KEY, ['agents:write']) };
    expect((await service.datasets.addDatasetItems({ datasetId: dataset.id, item: item(1) }, writer)).items).toHaveLength(1);
  });

  test('a cursor the list did not issue is refused', async ({ service }) => {
    const tenant = newTenant();
    const dataset = await createDataset(service, tenant);
    const error = await expectError(service.datasets.listDatasetItems({ datasetId: dataset.id, page: { limit: 10, cursor: 'bm90LWEtY3Vyc29y' } }, { principal: tenant.principal }), 'validation_error');
    expect(error.details.map((detail) => detail.field)).toEqual(['cursor']);
  });
});
