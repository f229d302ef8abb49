import type { AgentChat } from '../../src/agents/agent-chat.js';

/** Agent nodes' chat, answered here: the e2e suites run them against the real agent-memory. */
export const echoAgents: AgentChat = {
  chat: (turn) => Promise.resolve({ content: `echo: ${turn.message}`, session_id: 'ses_01JD0000000000000000000000', run_id: 'run_01JD0000000000000000000000', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
};
