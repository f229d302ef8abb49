import { ApiResponseError } from '@agent-platform/client';

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

export type JsonObject = Record<string, unknown>;

/** What a person typed, read: its value, or the local validation error that says what is wrong. */
export type Checked<Value> = { value: Value; error?: undefined } | { value?: undefined; error: ApiResponseError };

/** A JSON object typed into the text box of `field`; `example` shows what one looks like. */
export function parseJsonObject(text: string, field: string, example = '{"key": "value"}'): Checked<JsonObject> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: localValidationError(field, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: localValidationError(field, `must be a JSON object, e.g. ${example}`) };
  return { value: value as JsonObject };
}

/** An optional JSON object: empty text is none at all. */
export function parseOptionalJsonObject(text: string, field: string, example?: string): Checked<JsonObject | undefined> {
  return text.trim() === '' ? { value: undefined } : parseJsonObject(text, field, example);
}

/**
 * The value, or a throw of its error: inside a mutation function, a mistake found before sending
 * becomes the mutation's error, shown where the API's would be.
 */
export function checkedValue<Value>(checked: Checked<Value>): Value {
  if (checked.error) throw checked.error;
  return checked.value;
}
