import type { Cursor } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { CheckedDatasetItem } from './dataset-input.js';
import { Dataset, DatasetItem } from './datasets.entity.js';

export interface NewDataset {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  createdAt: Date;
}

export interface NewDatasetItem extends CheckedDatasetItem {
  id: string;
}

/** An item as stored, outside the unit of work: what inserts hand back and pages hold. */
export type DatasetItemRecord = Pick<DatasetItem, 'id' | 'tenantId' | 'datasetId' | 'input' | 'expected' | 'metadata' | 'createdAt'>;

/** Every read and write takes the tenant id: another tenant's dataset is simply not there. */
export class DatasetsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  insert(dataset: NewDataset): Dataset {
    return this.em.create(Dataset, { ...dataset, itemCount: 0, updatedAt: dataset.createdAt });
  }

  find(tenantId: string, id: string): Promise<Dataset | null> {
    return this.em.findOne(Dataset, { id, tenantId });
  }

  /** Newest first. */
  async list(tenantId: string, limit: number, offset: number): Promise<{ items: Dataset[]; total: number }> {
    const [items, total] = await this.em.findAndCount(Dataset, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /** Its items go with it (ON DELETE CASCADE). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(Dataset, { id, tenantId })) > 0;
  }

  /**
   * In the caller's transaction: counts the items into the dataset first, which locks its row, so a
   * delete of the dataset either waits and takes the items along or has already happened (null).
   */
  async addItems(tenantId: string, datasetId: string, items: readonly NewDatasetItem[], now: Date): Promise<DatasetItemRecord[] | null> {
    if (!(await this.count(tenantId, datasetId, items.length, now))) return null;
    const rows = items.map((item) => ({ ...item, tenantId, datasetId, createdAt: now }));
    await this.em.insertMany(DatasetItem, rows);
    return rows;
  }

  /** Newest first, after the cursor. */
  async listItems(tenantId: string, datasetId: string, limit: number, after: Cursor | undefined): Promise<{ items: DatasetItemRecord[]; hasMore: boolean }> {
    const position = after ? { $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, id: { $lt: after.id } }] } : {};
    const rows = await this.em.find(DatasetItem, { tenantId, datasetId, ...position }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: limit + 1 });
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** Oldest first, up to `limit`: the order an eval runs them in. */
  itemsInOrder(tenantId: string, datasetId: string, limit: number): Promise<DatasetItemRecord[]> {
    return this.em.find(DatasetItem, { tenantId, datasetId }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], limit });
  }

  /** In the caller's transaction. False when the dataset holds no such item. */
  async deleteItem(tenantId: string, datasetId: string, id: string, now: Date): Promise<boolean> {
    const removed = await this.em.nativeDelete(DatasetItem, { id, tenantId, datasetId });
    if (removed === 0) return false;
    await this.count(tenantId, datasetId, -1, now);
    return true;
  }

  private async count(tenantId: string, datasetId: string, change: number, now: Date): Promise<boolean> {
    const updated = await this.em.execute<{ affectedRows: number }>(
      `update "datasets" set "item_count" = "item_count" + ?, "updated_at" = ? where "id" = ? and "tenant_id" = ?`,
      [change, now, datasetId, tenantId],
      'run',
    );
    return updated.affectedRows > 0;
  }
}
