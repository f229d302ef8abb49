import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';

/** GET /agents/{agent_id}, cached under the agent's key (`invalidate('agents')` refreshes it); none until the id is known. */
export function useAgent(agentId: string | undefined) {
  return useTenantQuery(['agents', agentId ?? ''], (client) => call(client.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId ?? '' } } })), { enabled: agentId !== undefined });
}

/** The agents a person picks from (memory's agent, an eval's): one page of the most the API gives. */
const AGENT_CHOICES = 100;

export function useAgentChoices() {
  return useTenantQuery(['agents', 'choices'], (client) => call(client.GET('/api/v1/agents', { params: { query: { per_page: AGENT_CHOICES } } })));
}
