import { ApiResponseError } from '@agent-platform/client';

/**
 * The data of a client call, or a throw of its failure: what TanStack Query's query and mutation
 * functions want. Every failure is an ApiResponseError, carrying the API's `{ error, message,
 * details }` (decisions §2) for the page to show.
 */
export async function call<Data>(pending: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await pending;
  if (!response.ok) throw new ApiResponseError(response, error);
  return data as Data;
}

/** What went wrong, said for a person: the API's message, or why no answer came. */
export function describeError(error: unknown): { message: string; code?: string; fields: { field: string; message: string }[] } {
  if (error instanceof ApiResponseError) {
    const api = error.apiError;
    if (!api) return { message: `The platform answered ${error.status} ${error.response.statusText}`.trimEnd(), fields: [] };
    return { message: api.message, code: api.error, fields: api.details ?? [] };
  }
  if (error instanceof TypeError) return { message: 'The platform could not be reached. Check that it is running, then try again.', fields: [] };
  return { message: error instanceof Error ? error.message : String(error), fields: [] };
}

/** The message the API gave for one field (`name`, `nodes[2].config.url`), if any. */
export function fieldError(error: unknown, field: string): string | undefined {
  return describeError(error).fields.find((detail) => detail.field === field)?.message;
}
