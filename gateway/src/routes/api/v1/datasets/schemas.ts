import { characters, CHAT_MESSAGE_MAX, DATASET_EXPECTED_MAX, DATASET_ITEMS_PER_CALL_MAX } from '@agent-platform/kit';
import type { Dataset, DatasetItem, NewDatasetItem } from '@agent-platform/proto/agents/v1/datasets';
import { z } from 'zod';
import { EndUserId, iso, pathId, queryInt, TenantQuery, Timestamp } from '../../../../http/schemas.js';
import { ChatBody } from '../agents/_agent_id/chat/schemas.js';
import { jsonText, Metadata } from '../memory/schemas.js';

// The gateway checks shapes, types and the bounds it shares with the agent-memory service (a
// message's length, a batch's size); the service decides the rest (not blank, an end user's
// characters, metadata's size) and names each offending field as the caller sent it.

export const DatasetParams = z.object({ dataset_id: pathId('dataset', 'ds') });
export const DatasetItemParams = DatasetParams.extend({ item_id: pathId('dataset item', 'dsi') });

export const CreateDatasetBody = z
  .object({
    name: z.string().describe('1..200 characters, not blank.'),
    description: z.string().optional().describe('A note for people, up to 2,000 characters.'),
  })
  .meta({ examples: [{ name: 'Refund questions', description: 'What customers ask about refunds, with the answers policy gives.' }] });

export const DatasetSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    item_count: z.int().describe('How many items it holds now.'),
    created_at: Timestamp,
    updated_at: Timestamp.describe('Moves when its items change, too.'),
  })
  .meta({ id: 'Dataset', description: 'Inputs to evaluate agents on, each with what it should answer (decisions §16).' });

const ItemInput = z
  .object({
    message: ChatBody.shape.message.describe(`What the agent is told, as a chat turn's message: 1..${characters(CHAT_MESSAGE_MAX)} characters, not blank.`),
    user_id: EndUserId.optional().describe("The end user of your application the turn is for, as a chat turn's user_id: it sees their memories."),
  })
  .describe('What the agent is given when the item runs: one chat turn.');

const Expected = z
  .string()
  .max(DATASET_EXPECTED_MAX)
  .describe(`What the agent should answer, for scorers to compare its output with: up to ${characters(DATASET_EXPECTED_MAX)} characters.`);

const NewDatasetItemBody = z
  .object({ input: ItemInput, expected: Expected.optional(), metadata: Metadata.optional() })
  .describe('One item to add.');

const ITEM_EXAMPLE = { input: { message: 'Can I get a refund after 40 days?', user_id: 'customer-8812' }, expected: 'No: refunds are within 30 days of delivery.', metadata: { topic: 'refunds' } };

/**
 * One item, or `items`: one object either way, so a fault is named where it is (`input.message`,
 * `items[3].input.message`); a union would only say that neither shape fits.
 */
export const AddDatasetItemsBody = z
  .object({
    input: ItemInput.optional().describe('One item: what the agent is given (with expected and metadata beside it). Leave out with items.'),
    expected: Expected.optional(),
    metadata: Metadata.optional(),
    items: z
      .array(NewDatasetItemBody)
      .min(1)
      .max(DATASET_ITEMS_PER_CALL_MAX)
      .optional()
      .describe(`A batch of 1..${characters(DATASET_ITEMS_PER_CALL_MAX)} items, stored all or none. Leave out with input.`),
  })
  .check((ctx) => {
    const { input, expected, metadata, items } = ctx.value;
    if ((input === undefined) === (items === undefined)) {
      ctx.issues.push({ code: 'custom', path: ['input'], input: ctx.value, message: 'Send one item (input, expected, metadata) or a batch (items), one of the two.' });
    } else if (items !== undefined && (expected !== undefined || metadata !== undefined)) {
      const field = expected === undefined ? 'metadata' : 'expected';
      ctx.issues.push({ code: 'custom', path: [field], input: ctx.value, message: 'In a batch, each item has its own.' });
    }
  })
  .meta({ examples: [ITEM_EXAMPLE, { items: [ITEM_EXAMPLE, { input: { message: 'How do I return a gift?' }, expected: 'Use the gift receipt number on the returns page.' }] }] });

export const DatasetItemSchema = z
  .object({
    id: z.string(),
    dataset_id: z.string(),
    input: z.object({ message: z.string(), user_id: z.string().nullable() }),
    expected: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'DatasetItem', description: 'One input of a dataset and what it should answer.' });

export const DatasetItemBatchSchema = z.object({ items: z.array(DatasetItemSchema).describe('As stored, in the order sent.') });

/** decisions §5: items are cursor-paged, as the other lists that grow large. */
export const DatasetItemsQuery = TenantQuery.extend({
  limit: queryInt({ min: 1, max: 100, fallback: 20, description: 'Items per page, 1..100.' }),
  cursor: z.string().min(1).optional().describe('next_cursor of the previous page; absent for the first page.'),
});

export const DatasetItemPage = z.object({
  items: z.array(DatasetItemSchema),
  total: z.int().describe('Items of the dataset, all pages together.'),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page.'),
});

/** The gRPC item of one sent (objects as JSON text). */
export function newItemOf(item: z.output<typeof NewDatasetItemBody>): NewDatasetItem {
  return { input: { message: item.input.message, userId: item.input.user_id }, expected: item.expected, metadataJson: jsonText(item.metadata) };
}

/** The REST dataset of a gRPC answer; its absence is an upstream defect (500). */
export function datasetBody(dataset: Dataset | undefined): z.output<typeof DatasetSchema> {
  if (!dataset) throw new Error('agent-memory answered without the dataset.');
  return {
    id: dataset.id,
    name: dataset.name,
    description: dataset.description ?? null,
    item_count: dataset.itemCount,
    created_at: iso(dataset.createdAt),
    updated_at: iso(dataset.updatedAt),
  };
}

export function datasetItemBody(item: DatasetItem): z.output<typeof DatasetItemSchema> {
  if (!item.input) throw new Error('agent-memory answered an item without its input.');
  return {
    id: item.id,
    dataset_id: item.datasetId,
    input: { message: item.input.message, user_id: item.input.userId ?? null },
    expected: item.expected ?? null,
    metadata: item.metadataJson === undefined ? null : (JSON.parse(item.metadataJson) as Record<string, unknown>),
    created_at: iso(item.createdAt),
  };
}
