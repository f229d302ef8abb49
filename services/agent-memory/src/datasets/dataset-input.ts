import { characters, CHAT_MESSAGE_MAX, DATASET_EXPECTED_MAX, DATASET_ITEMS_PER_CALL_MAX, type FieldErrors } from '@agent-platform/kit';
import { checkMetadata, checkText, checkUserId } from '../memory/memory-input.js';
import type { DatasetItemInput } from './datasets.entity.js';

/** An item as sent: metadata as JSON text, so what is not an object reaches validation. */
export interface DatasetItemRequest {
  message: string;
  userId: string | undefined;
  expected: string | undefined;
  metadataJson: string | undefined;
}

/** What one call adds: one item, or a batch whose faults are named by position. */
export type DatasetItemsRequest = { item: DatasetItemRequest } | { batch: readonly DatasetItemRequest[] };

export interface CheckedDatasetItem {
  input: DatasetItemInput;
  expected: string | null;
  metadata: Record<string, unknown> | null;
}

/**
 * The items of a call, every fault named at once as the caller sent it: `input.message` for one
 * item, `items[3].input.message` in a batch. A message and its end user follow a chat turn's rules,
 * as an eval runs the item as one.
 */
export function checkDatasetItems(request: DatasetItemsRequest, errors: FieldErrors): CheckedDatasetItem[] {
  if ('item' in request) return [checkItem(request.item, '', errors)];
  const { batch } = request;
  if (batch.length === 0 || batch.length > DATASET_ITEMS_PER_CALL_MAX) {
    errors.add('items', `must hold 1 to ${characters(DATASET_ITEMS_PER_CALL_MAX)} items`);
    return [];
  }
  return batch.map((item, index) => checkItem(item, `items[${index}].`, errors));
}

function checkItem(item: DatasetItemRequest, prefix: string, errors: FieldErrors): CheckedDatasetItem {
  const message = checkText(`${prefix}input.message`, item.message, CHAT_MESSAGE_MAX, errors);
  const userId = checkUserId(item.userId, errors, `${prefix}input.user_id`);
  if (item.expected !== undefined && item.expected.length > DATASET_EXPECTED_MAX) {
    errors.add(`${prefix}expected`, `must be at most ${characters(DATASET_EXPECTED_MAX)} characters`);
  }
  const metadata = item.metadataJson === undefined ? null : checkMetadata(item.metadataJson, errors, `${prefix}metadata`);
  return { input: userId === undefined ? { message } : { message, user_id: userId }, expected: item.expected ?? null, metadata };
}
