import { END_USER_ID_MAX, type FieldErrors } from '@agent-platform/kit';

export const CONTENT_MAX = 32_000;
export const DOCUMENT_MAX = 1_000_000;
const TITLE_MAX = 500;
export const TOP_K_DEFAULT = 5;
const TOP_K_MAX = 100;
const METADATA_MAX_BYTES = 16_384;

export type Filter = Record<string, string | number | boolean>;

export function checkText(field: string, value: string, max: number, errors: FieldErrors): string {
  if (value.trim().length === 0 || value.length > max) errors.add(field, `must be 1 to ${max.toLocaleString('en')} characters, not blank`);
  return value;
}

export function checkTitle(title: string, errors: FieldErrors): string {
  if (title.length > TITLE_MAX) errors.add('title', `must be at most ${TITLE_MAX} characters`);
  return title;
}

/** A JSON object (as text), at most 16 KiB; absent means `{}`. */
export function checkMetadata(metadataJson: string | undefined, errors: FieldErrors, field = 'metadata'): Record<string, unknown> {
  if (metadataJson === undefined) return {};
  const value = parseObject(metadataJson);
  if (value === undefined) errors.add(field, 'must be a JSON object');
  else if (Buffer.byteLength(metadataJson) > METADATA_MAX_BYTES) errors.add(field, `must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
  return value ?? {};
}

/** An object whose values are strings, numbers or booleans, compared for equality. */
export function checkFilter(filterJson: string | undefined, errors: FieldErrors): Filter | undefined {
  if (filterJson === undefined) return undefined;
  const value = parseObject(filterJson);
  if (value === undefined) {
    errors.add('filter', 'must be an object');
    return undefined;
  }
  const filter: Filter = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' || typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item))) filter[key] = item;
    else errors.add(`filter.${key}`, 'must be a string, a number or a boolean');
  }
  return filter;
}

export function checkTopK(topK: number, errors: FieldErrors): number {
  if (topK === 0) return TOP_K_DEFAULT;
  if (!Number.isInteger(topK) || topK < 1 || topK > TOP_K_MAX) errors.add('top_k', `must be an integer from 1 to ${TOP_K_MAX}`);
  return topK;
}

export function checkMinScore(minScore: number | undefined, errors: FieldErrors): number {
  if (minScore === undefined) return 0;
  if (!Number.isFinite(minScore) || minScore < 0 || minScore > 1) errors.add('min_score', 'must be a number from 0 to 1');
  return minScore;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** decisions §14: an end user of the tenant's application, a free string of 1..END_USER_ID_MAX printable characters. */
export function checkUserId(userId: string | undefined, errors: FieldErrors, field = 'user_id'): string | undefined {
  if (userId === undefined) return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (userId.trim().length === 0 || userId.length > END_USER_ID_MAX || /[\u0000-\u001f\u007f]/.test(userId)) {
    errors.add(field, `must be 1 to ${END_USER_ID_MAX} characters, not blank, without control characters`);
  }
  return userId;
}
