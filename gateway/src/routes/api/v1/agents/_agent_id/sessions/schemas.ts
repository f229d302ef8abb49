import { citationBody } from '@agent-platform/kit';
import type { Session, SessionMessage } from '@agent-platform/proto/agents/v1/chat';
import { z } from 'zod';
import { iso, pathId, isoOrNull, Timestamp } from '../../../../../../http/schemas.js';
import { AgentParams } from '../../schemas.js';
import { Citations } from '../../../memory/documents/schemas.js';
import { SearchResultSchema, searchResultBody } from '../../../memory/schemas.js';
import { TOOL_CALL_STATUSES, toolCallBody, ToolCallSchema, usageBody, UsageSchema } from '../chat/schemas.js';

export const SessionParams = AgentParams.extend({ session_id: pathId('chat session', 'ses') });

export const SessionSchema = z
  .object({
    id: z.string(),
    created_at: Timestamp,
    last_message_at: Timestamp.nullable(),
    message_count: z.int().describe("The session's messages, the user's and the agent's."),
    user_id: z.string().nullable().describe('The end user it is a conversation with; null when none was named.'),
  })
  .meta({ id: 'ChatSession', description: 'A conversation with an agent.' });

export const SessionMessageSchema = z
  .object({
    id: z.string(),
    role: z.string().describe('user | assistant | tool'),
    content: z.string().describe("tool messages: what the model was given, the result's JSON or the error."),
    usage: UsageSchema.nullable().describe('Of the model round an assistant message answered; null for user and tool messages.'),
    status: z
      .enum([...TOOL_CALL_STATUSES])
      .nullable()
      .describe("assistant messages: completed, or awaiting_approval while one of their calls awaits a decision; tool messages: their call's status; null for user messages."),
    tool_calls: z.array(ToolCallSchema).describe('assistant messages: the calls they asked for; empty otherwise.'),
    tool_call_id: z.string().nullable().describe('tool messages: the call they answer.'),
    name: z.string().nullable().describe('tool messages: the name of the call they answer.'),
    model: z.string().nullable().describe('assistant messages: the model that answered; null otherwise.'),
    credits: z.int().nullable().describe('assistant messages: what their model round cost; null otherwise.'),
    memories: z
      .array(SearchResultSchema)
      .describe("assistant messages: the memories their model round was given, most relevant first, as the chat reply's memories; empty otherwise (and on rounds stored before they were kept)."),
    citations: Citations,
    run_id: z.string().nullable().describe('The run of the turn the message belongs to (GET /runs/{run_id}); null for turns stored before runs were kept.'),
    created_at: Timestamp,
  })
  .meta({ id: 'ChatSessionMessage', description: 'One message of a session.' });

export function sessionBody(session: Session): z.output<typeof SessionSchema> {
  return {
    id: session.id,
    created_at: iso(session.createdAt),
    last_message_at: isoOrNull(session.lastMessageAt),
    message_count: session.messageCount,
    user_id: session.userId ?? null,
  };
}

export function sessionMessageBody(message: SessionMessage): z.output<typeof SessionMessageSchema> {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    usage: message.usage ? usageBody(message.usage) : null,
    status: (message.status ?? null) as (typeof TOOL_CALL_STATUSES)[number] | null,
    tool_calls: message.toolCalls.map(toolCallBody),
    tool_call_id: message.toolCallId ?? null,
    name: message.name ?? null,
    model: message.model ?? null,
    credits: message.credits ?? null,
    memories: message.memories.map(searchResultBody),
    citations: message.citations.map(citationBody),
    run_id: message.runId ?? null,
    created_at: iso(message.createdAt),
  };
}
