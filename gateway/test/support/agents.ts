import type { FastifyInstance } from 'fastify';
import { as } from './harness.js';

/** An agent as the REST API answers it. */
export interface AgentBody {
  id: string;
  name: string;
  type: string;
  description: string | null;
  memory_types: string[];
  config: Record<string, unknown>;
  memory_extraction: 'off' | 'per_user' | 'shared';
  tools: string[];
  status: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** A chat reply as the REST API answers it (and as message.completed carries it). */
export interface ChatReply {
  id: string;
  role: string;
  content: string;
  status: 'completed' | 'awaiting_approval';
  tool_calls: Record<string, unknown>[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  credits: number;
  memories: Record<string, unknown>[];
  citations: Record<string, unknown>[];
  session_id: string;
  run_id: string;
  model: string;
  created_at: string;
}

/** Creates an agent of the caller's tenant through the gateway; `fields` override the defaults. */
export async function newAgent(app: FastifyInstance, credential: string, fields: Record<string, unknown> = {}): Promise<AgentBody> {
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/agents', payload: { name: 'Helper', type: 'support', ...fields } });
  if (created.statusCode !== 201) throw new Error(`agent: ${created.statusCode} ${created.body}`);
  return created.json<AgentBody>();
}

/** One chat turn answered as JSON; without `sessionId` it starts a session. */
export async function chatTurn(app: FastifyInstance, credential: string, agentId: string, message: string, sessionId?: string): Promise<ChatReply> {
  const payload = sessionId === undefined ? { message } : { message, session_id: sessionId };
  const answered = await as(app, credential, { method: 'POST', url: `/api/v1/agents/${agentId}/chat`, payload });
  if (answered.statusCode !== 200) throw new Error(`chat: ${answered.statusCode} ${answered.body}`);
  return answered.json<ChatReply>();
}
