import type { Session, SessionMessage } from '@agent-platform/proto/agents/v1/chat';
import { z } from 'zod';
import { iso, pathId, isoOrNull, Timestamp } from '../../../../../../http/schemas.js';
import { AgentParams } from '../../schemas.js';
import { usageBody, UsageSchema } from '../chat/schemas.js';

export const SessionParams = AgentParams.extend({ session_id: pathId('chat session', 'ses') });

export const SessionSchema = z
  .object({
    id: z.string(),
    created_at: Timestamp,
    last_message_at: Timestamp.nullable(),
    message_count: z.int().describe("The session's messages, the user's and the agent's."),
  })
  .meta({ id: 'ChatSession', description: 'A conversation with an agent.' });

export const SessionMessageSchema = z
  .object({
    id: z.string(),
    role: z.string().describe('user | assistant'),
    content: z.string(),
    usage: UsageSchema.nullable().describe('Of the turn an assistant message answered; null for user messages.'),
    created_at: Timestamp,
  })
  .meta({ id: 'ChatSessionMessage', description: 'One message of a session.' });

export function sessionBody(session: Session): z.output<typeof SessionSchema> {
  return {
    id: session.id,
    created_at: iso(session.createdAt),
    last_message_at: isoOrNull(session.lastMessageAt),
    message_count: session.messageCount,
  };
}

export function sessionMessageBody(message: SessionMessage): z.output<typeof SessionMessageSchema> {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    usage: message.usage ? usageBody(message.usage) : null,
    created_at: iso(message.createdAt),
  };
}
