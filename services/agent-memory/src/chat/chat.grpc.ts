import { DomainError, parsePage, type RunTrigger } from '@agent-platform/kit';
import { actorOf, present, type CallContext, type Handlers } from '@agent-platform/kit/grpc';
import type { ChatResponse, ChatServiceService, StreamChatResponse, ToolCall } from '@agent-platform/proto/agents/v1/chat';
import type { ChatReply, ChatService, TurnEvent } from './chat.service.js';
import { keptMemory, type ToolCallView } from './context.js';
import type { SessionsService } from './sessions.service.js';
import { toSearchResult } from '../memory/memory.grpc.js';
import { citationsOf } from '../documents/citations.js';

export const CHAT_SERVICE_NAME = 'agentplatform.agents.v1.ChatService';

/** ChatService: translation only; ChatService and SessionsService decide. */
export function chatHandlers(chat: ChatService, sessions: SessionsService): Handlers<typeof ChatServiceService> {
  const turnContext = (ctx: CallContext) => ({ signal: ctx.signal, requestId: ctx.requestId });
  const turnRequest = (request: { agentId: string; message: string; sessionId?: string | undefined; userId?: string | undefined; trigger?: string | undefined; agentVersion?: number | undefined }, byDefault: RunTrigger) => ({
    agentId: request.agentId,
    message: request.message,
    sessionId: present(request.sessionId),
    userId: present(request.userId),
    trigger: callerTrigger(present(request.trigger), byDefault),
    parentRunId: null,
    agentVersion: request.agentVersion,
  });
  const decision = (request: { agentId: string; sessionId: string; callId: string; approve: boolean; comment?: string | undefined }) => ({
    agentId: request.agentId,
    sessionId: request.sessionId,
    callId: request.callId,
    approve: request.approve,
    comment: present(request.comment),
  });
  return {
    chat: async (request, ctx) =>
      toMessage(await chat.chat(actorOf(ctx), turnRequest(request, 'chat'), turnContext(ctx))),

    async *streamChat(request, ctx) {
      yield* streamEvents(chat.stream(actorOf(ctx), turnRequest(request, 'stream'), turnContext(ctx)));
    },

    decideToolCall: async (request, ctx) => ({ reply: toMessage(await chat.decide(actorOf(ctx), decision(request), turnContext(ctx))) }),

    async *streamDecideToolCall(request, ctx) {
      for await (const event of streamEvents(chat.streamDecision(actorOf(ctx), decision(request), turnContext(ctx)))) yield { event };
    },

    listSessions: async (request, ctx) => {
      const { items, total } = await sessions.list(actorOf(ctx), request.agentId, parsePage(request.page));
      return {
        items: items.map((session) => ({
          id: session.id,
          agentId: session.agentId,
          messageCount: session.messageCount,
          createdAt: session.createdAt,
          lastMessageAt: session.lastMessageAt ?? undefined,
          userId: session.userId ?? undefined,
        })),
        total,
      };
    },

    listSessionMessages: async (request, ctx) => {
      const { items, total } = await sessions.messages(actorOf(ctx), request.agentId, request.sessionId, parsePage(request.page));
      return {
        items: items.map(({ message, status, toolCalls, name, runId }) => ({
          id: message.id,
          role: message.role,
          content: message.content,
          usage:
            message.totalTokens === null
              ? undefined
              : { promptTokens: message.promptTokens ?? 0, completionTokens: message.completionTokens ?? 0, totalTokens: message.totalTokens },
          createdAt: message.createdAt,
          status,
          toolCalls: toolCalls.map(toToolCall),
          toolCallId: message.toolCallId ?? undefined,
          name,
          model: message.model ?? undefined,
          credits: message.credits ?? undefined,
          memories: (message.memories ?? []).map((used) => toSearchResult(keptMemory(request.agentId, used))),
          citations: citationsOf(message.memories ?? []),
          runId,
        })),
        total,
      };
    },

    deleteSession: async (request, ctx) => {
      await sessions.delete(actorOf(ctx), request.agentId, request.sessionId);
      return {};
    },
  };
}

/** Turns the platform's own callers may name (decisions §16); the rest are the platform's to set. */
const CALLER_TRIGGERS: readonly RunTrigger[] = ['chat', 'stream', 'mcp', 'workflow'];

function callerTrigger(trigger: string | undefined, byDefault: RunTrigger): RunTrigger {
  if (trigger === undefined) return byDefault;
  const named = CALLER_TRIGGERS.find((allowed) => allowed === trigger);
  if (!named) throw DomainError.validation([{ field: 'trigger', message: `must be one of ${CALLER_TRIGGERS.join(', ')}` }]);
  return named;
}

/** A turn's events as the stream sends them, each naming the run (told first, not sent alone). */
async function* streamEvents(events: AsyncGenerator<TurnEvent, void, undefined>): AsyncGenerator<StreamChatResponse, void, undefined> {
  let runId = '';
  for await (const event of events) {
    if ('started' in event) runId = event.started.runId;
    else yield { ...toStreamEvent(event), runId };
  }
}

function toStreamEvent(event: Exclude<TurnEvent, { started: unknown }>): Omit<StreamChatResponse, 'runId'> {
  if ('delta' in event) return { delta: event.delta };
  if ('toolCall' in event) return { toolCall: event.toolCall };
  if ('toolResult' in event) {
    const { id, status, result, error, errorCode } = event.toolResult;
    return { toolResult: { id, status, resultJson: status === 'completed' ? JSON.stringify(result ?? null) : undefined, error: error ?? undefined, errorCode: errorCode ?? undefined } };
  }
  return { completed: toMessage(event.completed) };
}

function toMessage(reply: ChatReply): ChatResponse {
  return {
    ...reply,
    role: reply.role,
    toolCalls: reply.toolCalls.map(toToolCall),
    memories: reply.memories.map(toSearchResult),
    citations: citationsOf(reply.memories.map(({ candidate }) => candidate)),
  };
}

function toToolCall(call: ToolCallView): ToolCall {
  return {
    id: call.id,
    toolId: call.toolId ?? undefined,
    name: call.name,
    argumentsJson: JSON.stringify(call.arguments),
    status: call.status,
    resultJson: call.status === 'completed' ? JSON.stringify(call.result ?? null) : undefined,
    error: call.error ?? undefined,
    errorCode: call.errorCode ?? undefined,
    durationMs: call.durationMs ?? undefined,
    decidedBy: call.decidedBy ?? undefined,
    decidedAt: call.decidedAt ?? undefined,
    comment: call.comment ?? undefined,
  };
}
