import { localValidationError, parseOptionalJsonObject, type Checked } from '../../api/local-errors.js';

/** The API's rule for content and queries (1..32,000 characters, not blank), said the same way. */
export const BLANK_CONTENT = 'must be 1 to 32,000 characters, not blank';

/** What metadata looks like, in the hints and in the message for a metadata that is not an object. */
export const METADATA_EXAMPLE = '{"source": "crm"}';

export type Metadata = Record<string, unknown>;
export type MetadataFilter = Record<string, string | number | boolean>;

/** A search's metadata filter: an object whose values are compared for equality, so only strings, numbers and booleans. */
export function parseMetadataFilter(text: string): Checked<MetadataFilter | undefined> {
  const parsed = parseOptionalJsonObject(text, 'filter', METADATA_EXAMPLE);
  if (parsed.error) return parsed;
  if (parsed.value === undefined) return { value: undefined };
  const filter: MetadataFilter = {};
  for (const [key, value] of Object.entries(parsed.value)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return { error: localValidationError('filter', `"${key}" must be a string, a number or a boolean`) };
    filter[key] = value;
  }
  return { value: filter };
}

/** One metadata value as text: a string as it is, anything else as its JSON. */
export function metadataValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
