import type { ChatResponse, Usage } from '@agent-platform/proto/agents/v1/chat';
import { z } from 'zod';
import { iso, Timestamp } from '../../../../../../http/schemas.js';

export const ChatBody = z.object({
  // The service decides too (1..32,000 characters, not blank); the bound here spares it a body it would refuse.
  message: z.string().min(1).max(32_000).describe('What the user says: 1..32,000 characters, not blank.'),
  session_id: z
    .string()
    .min(1)
    .optional()
    .describe("Continues that session of this agent (its earlier turns are in the model's context); absent: a new session is started and returned."),
  stream: z.boolean().optional().describe('true: answer text/event-stream (see the 200 response) instead of one JSON reply.'),
}).meta({ examples: [{ message: 'Where is my order #1042?', session_id: 'ses_01JD0F3G4H5J6K7M8N9P0QRSTV' }] });

export const UsageSchema = z
  .object({ prompt_tokens: z.int(), completion_tokens: z.int(), total_tokens: z.int() })
  .meta({ id: 'TokenUsage', description: "Tokens of a turn, as the model provider counts them (or a real tokenizer when it reports none)." });

export const ChatMessageSchema = z
  .object({
    id: z.string(),
    role: z.string().describe('assistant'),
    content: z.string(),
    usage: UsageSchema,
    session_id: z.string().describe('The session the turn belongs to; pass it back to continue the conversation.'),
    model: z.string().describe('The model that answered; "offline" for the built-in model.'),
    created_at: Timestamp,
  })
  .meta({ id: 'ChatMessage', description: "The agent's reply to a chat turn." });

export const STREAM_DESCRIPTION = [
  'With `stream: true`: server-sent events, one per text piece then one to finish.',
  '',
  '```',
  'event: message.delta',
  'data: {"content":"<text piece>"}',
  '',
  'event: message.completed',
  'data: <the ChatMessage the non-streamed call answers; its content is the deltas joined>',
  '```',
  '',
  'A failure after the stream began is one `event: error` whose data is the Error object, and the',
  'stream ends. A failure before it began is an ordinary JSON error response with its status.',
  'Closing the connection early cancels the turn; a turn cancelled before it completes is neither',
  'stored nor charged.',
].join('\n');

export function usageBody(usage: Usage | undefined): z.output<typeof UsageSchema> {
  return { prompt_tokens: usage?.promptTokens ?? 0, completion_tokens: usage?.completionTokens ?? 0, total_tokens: usage?.totalTokens ?? 0 };
}

export function chatMessageBody(reply: ChatResponse): z.output<typeof ChatMessageSchema> {
  return {
    id: reply.id,
    role: reply.role,
    content: reply.content,
    usage: usageBody(reply.usage),
    session_id: reply.sessionId,
    model: reply.model,
    created_at: iso(reply.createdAt),
  };
}
