import { ApiResponseError } from '@agent-platform/client';

/** The API's rule for content and queries (1..32,000 characters, not blank), said the same way. */
export const BLANK_CONTENT = 'must be 1 to 32,000 characters, not blank';

export type Metadata = Record<string, unknown>;
export type MetadataFilter = Record<string, string | number | boolean>;

/**
 * A mistake found before anything is sent, in the shape the API answers one (decisions §2), so
 * `Field` shows it next to its control and `ErrorNotice` above the form, exactly as the API's own.
 */
export function localValidationError(field: string, message: string): ApiResponseError {
  return new ApiResponseError(new Response(null, { status: 422, statusText: 'Unprocessable Content' }), {
    error: 'validation_error',
    message: 'Check the field marked below: nothing was sent.',
    details: [{ field, message }],
  });
}

/** A JSON object typed into a text box; empty text is no object at all. */
export function parseJsonObject(text: string, field: string): { value: Metadata | undefined } | { error: ApiResponseError } {
  if (text.trim() === '') return { value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: localValidationError(field, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: localValidationError(field, 'must be a JSON object, e.g. {"source": "crm"}') };
  return { value: value as Metadata };
}

/** A search's metadata filter: an object whose values are compared for equality, so only strings, numbers and booleans. */
export function parseMetadataFilter(text: string): { value: MetadataFilter | undefined } | { error: ApiResponseError } {
  const parsed = parseJsonObject(text, 'filter');
  if ('error' in parsed) return parsed;
  if (parsed.value === undefined) return { value: undefined };
  const filter: MetadataFilter = {};
  for (const [key, value] of Object.entries(parsed.value)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return { error: localValidationError('filter', `"${key}" must be a string, a number or a boolean`) };
    filter[key] = value;
  }
  return { value: filter };
}

/** Metadata as it is edited: indented JSON, or nothing for an empty object. */
export function metadataText(metadata: Metadata): string {
  return Object.keys(metadata).length === 0 ? '' : JSON.stringify(metadata, null, 2);
}

/** One metadata value as text: a string as it is, anything else as its JSON. */
export function metadataValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
