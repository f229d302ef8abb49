import type { Agent, AgentPlatformClient, ChatSessionMessage, MemoryItem, Run } from '@agent-platform/client';
import { call } from '../../api/call.js';

// What the playground reads of a stored session, and whether it looks for what a turn taught.

/** The API's largest page (of messages, of runs); a session longer than HISTORY_PAGES of them shows its newest messages. */
const MESSAGES_PER_PAGE = 100;
const HISTORY_PAGES = 5;

/** Whether the agent's turns may be followed by memory extraction, as the API resolves it (decisions §14.2). */
export function extractsFacts(agent: Agent): boolean {
  return agent.memory_extraction !== 'off';
}

/** What the end user field tells of extraction, by the agent's setting. */
export const END_USER_EXTRACTION_HINTS: Record<Agent['memory_extraction'], string> = {
  off: '',
  per_user: ' Facts are learned only from turns that name one.',
  shared: ' Facts of turns without one are learned into the shared memories.',
};

/** The memory items the session's turns added or changed (decisions §14), newest first. */
export async function learnedItems(client: AgentPlatformClient, agentId: string, sessionId: string): Promise<MemoryItem[]> {
  const list = await call(client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, session_id: sessionId, per_page: 100 } } }));
  return list.items;
}

/** The session's messages, oldest first; of a long session, the newest HISTORY_PAGES pages. */
export async function sessionMessages(client: AgentPlatformClient, agentId: string, sessionId: string): Promise<{ items: ChatSessionMessage[]; total: number }> {
  const page = (number: number) => call(client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agentId, session_id: sessionId }, query: { page: number, per_page: MESSAGES_PER_PAGE } } }));
  const first = await page(1);
  const pages = Math.ceil(first.total / MESSAGES_PER_PAGE);
  if (pages <= 1) return first;
  const from = Math.max(2, pages - HISTORY_PAGES + 1);
  const rest = [];
  for (let number = from; number <= pages; number += 1) rest.push(await page(number));
  const items = [...(from === 2 ? first.items : []), ...rest.flatMap((found) => found.items)];
  return { items, total: first.total };
}

/** The session's runs, newest first, as many pages as its shown messages can hold turns. */
export async function sessionRuns(client: AgentPlatformClient, agentId: string, sessionId: string): Promise<Run[]> {
  const page = (cursor: string | null) => call(client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId }, query: { session_id: sessionId, limit: MESSAGES_PER_PAGE, ...(cursor ? { cursor } : {}) } } }));
  const runs: Run[] = [];
  let cursor: string | null = null;
  for (let number = 1; number <= HISTORY_PAGES; number += 1) {
    const list = await page(cursor);
    runs.push(...list.items);
    cursor = list.next_cursor;
    if (!cursor) break;
  }
  return runs;
}
