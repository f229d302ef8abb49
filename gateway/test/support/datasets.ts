import type { FastifyInstance } from 'fastify';
import { as } from './harness.js';

/** A dataset as the REST API answers it. */
export interface DatasetBody {
  id: string;
  name: string;
  description: string | null;
  item_count: number;
  created_at: string;
  updated_at: string;
}

/** A dataset item as the REST API answers it. */
export interface DatasetItemBody {
  id: string;
  dataset_id: string;
  input: { message: string; user_id: string | null };
  expected: string | null;
  metadata: Record<string, unknown> | null;
  created_at: string;
}

/** An item to send; `fields` override the defaults. */
export function datasetItem(index: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { input: { message: `Question ${index}` }, expected: `Answer ${index}`, ...fields };
}

/** Creates a dataset of the caller's tenant through the gateway; `query` picks the tenant. */
export async function newDataset(app: FastifyInstance, credential: string, fields: Record<string, unknown> = {}, query: Record<string, string> = {}): Promise<DatasetBody> {
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/datasets', query, payload: { name: 'Refund questions', ...fields } });
  if (created.statusCode !== 201) throw new Error(`dataset: ${created.statusCode} ${created.body}`);
  return created.json<DatasetBody>();
}

/** Adds a batch of items to the dataset through the gateway. */
export async function addDatasetItems(app: FastifyInstance, credential: string, datasetId: string, items: Record<string, unknown>[]): Promise<DatasetItemBody[]> {
  const added = await as(app, credential, { method: 'POST', url: `/api/v1/datasets/${datasetId}/items`, payload: { items } });
  if (added.statusCode !== 201) throw new Error(`dataset items: ${added.statusCode} ${added.body}`);
  return added.json<{ items: DatasetItemBody[] }>().items;
}
