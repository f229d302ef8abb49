import { ApiResponseError, type AgentPlatformClient } from '@agent-platform/client';
import { call } from '../../api/call.js';

/**
 * A mistake found before sending (JSON that does not parse), in the API's own validation shape,
 * so Field and ErrorNotice show it exactly where and how they show the API's.
 */
export function localValidationError(field: string, message: string): ApiResponseError {
  return new ApiResponseError(new Response(null, { status: 422, statusText: 'Unprocessable Content' }), {
    error: 'validation_error',
    message: 'Check the highlighted field; nothing was sent.',
    details: [{ field, message }],
  });
}

/** Every tool of the tenant, for choosing among them (100 a page, the API's largest). */
export async function allTools(client: AgentPlatformClient) {
  const tools = [];
  for (let page = 1; ; page += 1) {
    const list = await call(client.GET('/api/v1/tools', { params: { query: { page, per_page: 100 } } }));
    tools.push(...list.items);
    if (list.items.length === 0 || tools.length >= list.total) return tools;
  }
}
