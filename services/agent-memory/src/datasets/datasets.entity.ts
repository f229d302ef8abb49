import { defineEntity, p } from '@mikro-orm/postgresql';

export const DatasetSchema = defineEntity({
  name: 'Dataset',
  tableName: 'datasets',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    name: p.text(),
    description: p.text().strictNullable(),
    /** Kept by the transactions that add and delete items (0013_datasets says why). */
    itemCount: p.integer(),
    createdAt: p.datetime(),
    /** Moves when its items change, too. */
    updatedAt: p.datetime(),
  },
});

export class Dataset extends DatasetSchema.class {}
DatasetSchema.setClass(Dataset);

/** What an eval gives the agent when the item runs: a chat turn's message and end user. */
export interface DatasetItemInput {
  message: string;
  user_id?: string;
}

export const DatasetItemSchema = defineEntity({
  name: 'DatasetItem',
  tableName: 'dataset_items',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    datasetId: p.string(),
    input: p.json<DatasetItemInput>().columnType('jsonb'),
    expected: p.text().strictNullable(),
    metadata: p.json<Record<string, unknown>>().columnType('jsonb').strictNullable(),
    createdAt: p.datetime(),
  },
});

export class DatasetItem extends DatasetItemSchema.class {}
DatasetItemSchema.setClass(DatasetItem);
