import { defineEntity, p } from '@mikro-orm/postgresql';
import type { MemoryType } from '../agents/agents.entity.js';

/** A conversation with an agent: its messages are the agent's episodic memory of it. */
export const SessionSchema = defineEntity({
  name: 'ChatSession',
  tableName: 'chat_sessions',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    /** The end user it is a conversation with (decisions §14); null: none named. */
    userId: p.string().strictNullable(),
    messageCount: p.integer(),
    /** The oldest messages already summarised into semantic memory by consolidation. */
    consolidatedCount: p.integer(),
    createdAt: p.datetime(),
    lastMessageAt: p.datetime().strictNullable(),
  },
});

export class ChatSession extends SessionSchema.class {}
SessionSchema.setClass(ChatSession);

/** A memory as a model round was given it (an assistant message's `memories`), with its score. */
export interface UsedMemory {
  id: string;
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  userId: string | null;
  /** ISO 8601, as JSON keeps it. */
  createdAt: string;
  updatedAt: string | null;
  score: number;
}

export const MESSAGE_ROLES = ['user', 'assistant', 'tool'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const MessageSchema = defineEntity({
  name: 'ChatMessage',
  tableName: 'chat_messages',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    sessionId: p.string(),
    /** The message's place in its session, from 1: a turn's rows share their millisecond. */
    seq: p.integer(),
    role: p.enum(MESSAGE_ROLES),
    /** The text; for a `tool` message, what the model was given: the result's JSON, or the error. */
    content: p.text(),
    /** `tool` messages: the call they answer. */
    toolCallId: p.string().strictNullable(),
    /** Token counts and model: set on assistant messages only. */
    promptTokens: p.integer().strictNullable(),
    completionTokens: p.integer().strictNullable(),
    totalTokens: p.integer().strictNullable(),
    model: p.text().strictNullable(),
    /** What the turn costs (assistant messages), and when identity took it; null until then. */
    credits: p.integer().strictNullable(),
    chargedAt: p.datetime().strictNullable(),
    /** Assistant messages: the memories the round was given, most relevant first. */
    memories: p.json<UsedMemory[]>().columnType('jsonb').strictNullable(),
    createdAt: p.datetime(),
  },
});

export class ChatMessageRow extends MessageSchema.class {}
MessageSchema.setClass(ChatMessageRow);

/**
 * decisions §12. `awaiting_approval` waits for a person; `approved` is decided and running (or was,
 * on a replica that stopped); the other three are final.
 */
export const TOOL_CALL_STATUSES = ['awaiting_approval', 'approved', 'completed', 'failed', 'rejected'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];
/** A call in one of these keeps its session from taking a new message. */
export const OPEN_TOOL_CALL_STATUSES: readonly ToolCallStatus[] = ['awaiting_approval', 'approved'];

/** A call a model asked for in a turn: on the assistant message that asked, in the model's order. */
export const ToolCallSchema = defineEntity({
  name: 'ToolCallRow',
  tableName: 'tool_calls',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    sessionId: p.string(),
    messageId: p.string(),
    position: p.integer(),
    /** Null when the model named no tool of the agent. */
    toolId: p.string().strictNullable(),
    /** The name the model called: the tool's, or `<tool>__<remote>` for an MCP server's. */
    name: p.text(),
    /** The model's arguments: an object, or the text it wrote when that was not one. */
    arguments: p.json<unknown>().columnType('jsonb'),
    status: p.enum(TOOL_CALL_STATUSES),
    result: p.json<unknown>().columnType('jsonb').strictNullable(),
    error: p.text().strictNullable(),
    /** forbidden or unauthorized when the platform refused the call for the turn's credential. */
    errorCode: p.text().strictNullable(),
    durationMs: p.integer().strictNullable(),
    /** Who approved or rejected it (a user or API key id), when, and what they said. */
    decidedBy: p.string().strictNullable(),
    decidedAt: p.datetime().strictNullable(),
    decisionComment: p.text().strictNullable(),
    createdAt: p.datetime(),
    finishedAt: p.datetime().strictNullable(),
  },
});

export class ToolCallRow extends ToolCallSchema.class {}
ToolCallSchema.setClass(ToolCallRow);
