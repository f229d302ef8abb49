import { parseCursorPage, parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type {
  AddDatasetItemsRequest,
  DatasetItem as DatasetItemMessage,
  Dataset as DatasetMessage,
  DatasetServiceService,
  NewDatasetItem,
} from '@agent-platform/proto/agents/v1/datasets';
import type { DatasetItemRequest, DatasetItemsRequest } from './dataset-input.js';
import type { Dataset } from './datasets.entity.js';
import type { DatasetItemRecord } from './datasets.repository.js';
import type { DatasetsService } from './datasets.service.js';

export const DATASET_SERVICE_NAME = 'agentplatform.agents.v1.DatasetService';

/** DatasetService: translation only; DatasetsService decides. */
export function datasetHandlers(datasets: DatasetsService): Handlers<typeof DatasetServiceService> {
  return {
    createDataset: async (request, ctx) => ({
      dataset: toMessage(await datasets.create(actorOf(ctx), { name: request.name, description: request.description })),
    }),

    listDatasets: async (request, ctx) => {
      const { items, total } = await datasets.list(actorOf(ctx), parsePage(request.page));
      return { datasets: items.map(toMessage), total };
    },

    getDataset: async (request, ctx) => ({ dataset: toMessage(await datasets.get(actorOf(ctx), request.datasetId)) }),

    deleteDataset: async (request, ctx) => {
      await datasets.delete(actorOf(ctx), request.datasetId);
      return {};
    },

    addDatasetItems: async (request, ctx) => {
      const added = await datasets.addItems(actorOf(ctx), request.datasetId, itemsRequest(request));
      return { items: added.map(toItemMessage) };
    },

    listDatasetItems: async (request, ctx) => {
      const page = await datasets.listItems(actorOf(ctx), request.datasetId, parseCursorPage(request.page));
      return { items: page.items.map(toItemMessage), total: page.total, nextCursor: page.nextCursor };
    },

    deleteDatasetItem: async (request, ctx) => {
      await datasets.deleteItem(actorOf(ctx), request.datasetId, request.itemId);
      return {};
    },
  };
}

/** Neither an item nor a batch is an empty batch, which validation refuses. */
function itemsRequest(request: AddDatasetItemsRequest): DatasetItemsRequest {
  if (request.item) return { item: itemRequest(request.item) };
  return { batch: (request.batch?.items ?? []).map(itemRequest) };
}

function itemRequest(item: NewDatasetItem): DatasetItemRequest {
  // An empty expected is an answer to compare with, not an absent one: proto3 optional keeps them apart.
  return { message: item.input?.message ?? '', userId: present(item.input?.userId), expected: item.expected, metadataJson: present(item.metadataJson) };
}

export function toMessage(dataset: Dataset): DatasetMessage {
  return {
    id: dataset.id,
    name: dataset.name,
    description: dataset.description ?? undefined,
    itemCount: dataset.itemCount,
    createdAt: dataset.createdAt,
    updatedAt: dataset.updatedAt,
  };
}

export function toItemMessage(item: DatasetItemRecord): DatasetItemMessage {
  return {
    id: item.id,
    datasetId: item.datasetId,
    input: { message: item.input.message, userId: item.input.user_id },
    expected: item.expected ?? undefined,
    metadataJson: item.metadata === null ? undefined : JSON.stringify(item.metadata),
    createdAt: item.createdAt,
  };
}
