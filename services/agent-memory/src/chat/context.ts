import type { Ranked } from '../memory/hybrid-ranking.js';
import type { MemoryItemView } from '../memory/memory-items.js';
import type { ChatMessage } from '../models/chat-model.js';
import type { ChatMessageRow, ToolCallRow, ToolCallStatus, UsedMemory } from './chat.entity.js';

/** A tool call as answers and session listings show it (decisions §12). */
export interface ToolCallView {
  id: string;
  messageId: string;
  toolId: string | null;
  name: string;
  arguments: unknown;
  status: ToolCallStatus;
  result: unknown;
  error: string | null;
  /** Set when the platform refused the call for the turn's credential: forbidden or unauthorized. */
  errorCode: string | null;
  durationMs: number | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  comment: string | null;
}

export function toolCallView(call: ToolCallRow): ToolCallView {
  return {
    id: call.id,
    messageId: call.messageId,
    toolId: call.toolId,
    name: call.name,
    arguments: call.arguments,
    status: call.status,
    result: call.result,
    error: call.error,
    errorCode: call.errorCode,
    durationMs: call.durationMs,
    decidedBy: call.decidedBy,
    decidedAt: call.decidedAt,
    comment: call.decisionComment,
  };
}

/**
 * What the model is given for a finished call: the result as JSON text (a string as itself), or
 * the error, with its §2 code when the platform refused the call (so the model can tell a refusal
 * from a tool that failed).
 */
export function outcomeText(call: { status: ToolCallStatus; result: unknown; error: string | null; errorCode: string | null }): string {
  if (call.status === 'completed') return typeof call.result === 'string' ? call.result : JSON.stringify(call.result ?? null);
  return JSON.stringify({ error: call.error ?? call.status, ...(call.errorCode === null ? {} : { error_code: call.errorCode }) });
}

/**
 * Stored messages as a model's context. Every answer that asked for calls is followed at once by
 * one `tool` message per call, as providers require: a result cut off by the history window's
 * edge is dropped with its call, and a call with no stored result (still open) gets one saying so.
 */
export function contextOf(rows: readonly ChatMessageRow[], calls: readonly ToolCallRow[]): ChatMessage[] {
  const callsByAnswer = Map.groupBy(calls, (call) => call.messageId);
  const results = new Map(rows.filter((row) => row.role === 'tool' && row.toolCallId !== null).map((row) => [row.toolCallId!, row.content]));
  const context: ChatMessage[] = [];
  for (const row of rows) {
    if (row.role === 'user') context.push({ role: 'user', content: row.content });
    if (row.role !== 'assistant') continue;
    const asked = (callsByAnswer.get(row.id) ?? []).toSorted((a, b) => a.position - b.position);
    if (asked.length === 0) {
      context.push({ role: 'assistant', content: row.content });
      continue;
    }
    context.push({
      role: 'assistant',
      content: row.content,
      toolCalls: asked.map((call) => ({ id: call.id, name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) })),
    });
    for (const call of asked) {
      context.push({ role: 'tool', toolCallId: call.id, content: results.get(call.id) ?? JSON.stringify({ error: `no result: the call is ${call.status.replace('_', ' ')}` }) });
    }
  }
  return context;
}

/** A memory a round was given, as its answer keeps it. */
export function usedMemory({ candidate, score }: Ranked<MemoryItemView>): UsedMemory {
  const { id, memoryType, content, metadata, userId, createdAt, updatedAt } = candidate;
  return { id, memoryType, content, metadata, userId, createdAt: createdAt.toISOString(), updatedAt: updatedAt?.toISOString() ?? null, score };
}

/** A memory as an answer kept it, ranked again as it was given: an item of the agent `agentId`. */
export function keptMemory(agentId: string, { score, createdAt, updatedAt, ...item }: UsedMemory): Ranked<MemoryItemView> {
  return { candidate: { ...item, agentId, createdAt: new Date(createdAt), updatedAt: updatedAt === null ? null : new Date(updatedAt) }, score };
}
