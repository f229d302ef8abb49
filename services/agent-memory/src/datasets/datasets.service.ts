import { ACCESS, DomainError, encodeCursor, FieldErrors, newId, requireAccess, type Actor, type Clock, type CursorPage, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { checkDescription, checkName } from '../agents/agent-input.js';
import { checkDatasetItems, type DatasetItemsRequest } from './dataset-input.js';
import type { Dataset } from './datasets.entity.js';
import type { DatasetItemRecord, DatasetsRepository } from './datasets.repository.js';

export interface DatasetRequest {
  name: string;
  description: string | undefined;
}

export interface DatasetItemPage {
  items: DatasetItemRecord[];
  total: number;
  nextCursor: string | undefined;
}

export interface DatasetsServiceOptions {
  em: EntityManager;
  datasets: DatasetsRepository;
  clock: Clock;
}

/**
 * Datasets of the actor's tenant and their items (decisions §16). A dataset is test data of the
 * tenant's agents, so it takes their access: agents:read to read, agents:write to change. No events.
 */
export class DatasetsService {
  private readonly options: DatasetsServiceOptions;

  constructor(options: DatasetsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: DatasetRequest): Promise<Dataset> {
    const now = new Date(this.options.clock.now());
    requireAccess(actor, ACCESS.agents.write);
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const description = request.description === undefined ? null : checkDescription(request.description, errors);
    errors.throwIfAny();
    return this.options.em.transactional(async (em) => {
      const dataset = this.options.datasets.insert({ id: newId('dataset'), tenantId: actor.tenantId, name, description, createdAt: now });
      await em.flush();
      return dataset;
    });
  }

  list(actor: Actor, page: Page): Promise<{ items: Dataset[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    return this.options.datasets.list(actor.tenantId, page.perPage, page.offset);
  }

  async get(actor: Actor, id: string): Promise<Dataset> {
    requireAccess(actor, ACCESS.agents.read);
    return found(await this.options.datasets.find(actor.tenantId, id));
  }

  /** The dataset and all its items. */
  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.agents.write);
    if (!(await this.options.datasets.delete(actor.tenantId, id))) throw DomainError.notFound('Dataset');
  }

  /** Every item of the call, in one transaction, or none. */
  async addItems(actor: Actor, datasetId: string, request: DatasetItemsRequest): Promise<DatasetItemRecord[]> {
    const now = new Date(this.options.clock.now());
    requireAccess(actor, ACCESS.agents.write);
    const errors = new FieldErrors();
    const checked = checkDatasetItems(request, errors);
    errors.throwIfAny();
    const items = checked.map((item) => ({ id: newId('datasetItem'), ...item }));
    const added = await this.options.em.transactional(() => this.options.datasets.addItems(actor.tenantId, datasetId, items, now));
    if (!added) throw DomainError.notFound('Dataset');
    return added;
  }

  /** Newest first; `total` is the dataset's count of items. */
  async listItems(actor: Actor, datasetId: string, page: CursorPage): Promise<DatasetItemPage> {
    requireAccess(actor, ACCESS.agents.read);
    const dataset = found(await this.options.datasets.find(actor.tenantId, datasetId));
    const { items, hasMore } = await this.options.datasets.listItems(actor.tenantId, datasetId, page.limit, page.after);
    const last = items.at(-1);
    return { items, total: dataset.itemCount, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : undefined };
  }

  async deleteItem(actor: Actor, datasetId: string, itemId: string): Promise<void> {
    const now = new Date(this.options.clock.now());
    requireAccess(actor, ACCESS.agents.write);
    const removed = await this.options.em.transactional(() => this.options.datasets.deleteItem(actor.tenantId, datasetId, itemId, now));
    if (!removed) throw DomainError.notFound('Dataset item');
  }
}

function found(dataset: Dataset | null): Dataset {
  if (!dataset) throw DomainError.notFound('Dataset');
  return dataset;
}
