import { defineEntity, p } from '@mikro-orm/postgresql';

/** A conversation with an agent: its messages are the agent's episodic memory of it. */
export const SessionSchema = defineEntity({
  name: 'ChatSession',
  tableName: 'chat_sessions',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    messageCount: p.integer(),
    /** The oldest messages already summarised into semantic memory by consolidation. */
    consolidatedCount: p.integer(),
    createdAt: p.datetime(),
    lastMessageAt: p.datetime().strictNullable(),
  },
});

export class ChatSession extends SessionSchema.class {}
SessionSchema.setClass(ChatSession);

export const MESSAGE_ROLES = ['user', 'assistant'] as const;

export const MessageSchema = defineEntity({
  name: 'ChatMessage',
  tableName: 'chat_messages',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    sessionId: p.string(),
    role: p.enum(MESSAGE_ROLES),
    content: p.text(),
    /** Token counts and model: set on assistant messages only. */
    promptTokens: p.integer().strictNullable(),
    completionTokens: p.integer().strictNullable(),
    totalTokens: p.integer().strictNullable(),
    model: p.text().strictNullable(),
    /** What the turn costs (assistant messages), and when identity took it; null until then. */
    credits: p.integer().strictNullable(),
    chargedAt: p.datetime().strictNullable(),
    createdAt: p.datetime(),
  },
});

export class ChatMessageRow extends MessageSchema.class {}
MessageSchema.setClass(ChatMessageRow);
