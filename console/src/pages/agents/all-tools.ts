import type { AgentPlatformClient } from '@agent-platform/client';
import { call } from '../../api/call.js';

/** Every tool of the tenant, for choosing among them (100 a page, the API's largest). */
export async function allTools(client: AgentPlatformClient) {
  const tools = [];
  for (let page = 1; ; page += 1) {
    const list = await call(client.GET('/api/v1/tools', { params: { query: { page, per_page: 100 } } }));
    tools.push(...list.items);
    if (list.items.length === 0 || tools.length >= list.total) return tools;
  }
}
