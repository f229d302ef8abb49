import { parsePage } from '@agent-platform/kit';
import { actorOf, present, type CallContext, type Handlers } from '@agent-platform/kit/grpc';
import type { ChatResponse, ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import type { ChatReply, ChatService } from './chat.service.js';
import type { SessionsService } from './sessions.service.js';

export const CHAT_SERVICE_NAME = 'agentplatform.agents.v1.ChatService';

/** ChatService: translation only; ChatService and SessionsService decide. */
export function chatHandlers(chat: ChatService, sessions: SessionsService): Handlers<typeof ChatServiceService> {
  const turnContext = (ctx: CallContext) => ({ signal: ctx.signal, requestId: ctx.requestId });
  return {
    chat: async (request, ctx) =>
      toMessage(await chat.chat(actorOf(ctx), { agentId: request.agentId, message: request.message, sessionId: present(request.sessionId) }, turnContext(ctx))),

    async *streamChat(request, ctx) {
      const events = chat.stream(actorOf(ctx), { agentId: request.agentId, message: request.message, sessionId: present(request.sessionId) }, turnContext(ctx));
      for await (const event of events) yield 'delta' in event ? { delta: event.delta } : { completed: toMessage(event.completed) };
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
        })),
        total,
      };
    },

    listSessionMessages: async (request, ctx) => {
      const { items, total } = await sessions.messages(actorOf(ctx), request.agentId, request.sessionId, parsePage(request.page));
      return {
        items: items.map((message) => ({
          id: message.id,
          role: message.role,
          content: message.content,
          usage:
            message.totalTokens === null
              ? undefined
              : { promptTokens: message.promptTokens ?? 0, completionTokens: message.completionTokens ?? 0, totalTokens: message.totalTokens },
          createdAt: message.createdAt,
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

function toMessage(reply: ChatReply): ChatResponse {
  return { ...reply, role: reply.role };
}
