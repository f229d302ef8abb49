import { setImmediate } from 'node:timers/promises';
import { createLogger, DomainError, newId } from '@agent-platform/kit';
import { GrpcServer, requirePrincipal, type CallContext, type Handlers } from '@agent-platform/kit/grpc';
import { AgentServiceService, type Agent, type AgentConfig } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService, type ChatResponse, type StreamChatRequest, type StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import { MemoryServiceService, type MemoryItem } from '@agent-platform/proto/agents/v1/memory';
import type { RecordedCall } from './identity-double.js';

/** A call as the double received it, request message included. */
export interface AgentMemoryCall extends RecordedCall {
  request: unknown;
}

export type StreamChatScript = (request: StreamChatRequest, ctx: CallContext) => AsyncIterable<StreamChatResponse>;

/** The reply the double gives to `message` in `sessionId`. */
export function replyTo(message: string, sessionId = 'ses_01JD0000000000000000000001'): ChatResponse {
  return {
    id: 'msg_01JD0000000000000000000002',
    role: 'assistant',
    content: `You said: ${message}`,
    usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 },
    sessionId,
    model: 'offline',
    createdAt: new Date('2026-01-02T03:04:05.006Z'),
  };
}

/** Each event (or failure) in turn, a turn of the event loop apart, as from a network. */
export function scripted(events: readonly (StreamChatResponse | Error)[]): StreamChatScript {
  return async function* () {
    for (const event of events) {
      await setImmediate();
      if (event instanceof Error) throw event;
      yield event;
    }
  };
}

/** The reply's text in word pieces (each keeps its trailing space), then the reply. */
export const wordsThenReply: StreamChatScript = (request, ctx) => {
  const reply = replyTo(request.message, request.sessionId);
  return scripted([...reply.content.split(/(?<=\s)/).map((piece) => ({ delta: piece })), { completed: reply }])(request, ctx);
};

function configOf(json: string | undefined): AgentConfig {
  const value = JSON.parse(json ?? '{}') as Record<string, unknown>;
  const pick = <T>(key: string) => value[key] as T | undefined;
  return { model: pick('model'), temperature: pick('temperature'), maxTokens: pick('max_tokens'), systemPrompt: pick('system_prompt'), topP: pick('top_p') };
}

/**
 * A real gRPC server of agent-memory's generated services (AgentService, ChatService,
 * MemoryService) for the gateway's own tests. It keeps agents per tenant and otherwise answers
 * with fixed fixtures shaped by the request: it does not re-implement the service's rules (those
 * are tested against the real service, end to end). Tests plant faults and script StreamChat.
 */
export class AgentMemoryDouble {
  readonly calls: AgentMemoryCall[] = [];
  /** One-shot failures: the next call of the method throws this. */
  readonly faults = new Map<string, Error>();
  readonly agents = new Map<string, { tenantId: string; agent: Agent }>();
  /** How StreamChat answers; by default the reply's words, then the reply. */
  streamChat: StreamChatScript = wordsThenReply;
  /** How long Chat takes (milliseconds): a slow model on the far side. */
  chatDelayMs = 0;
  private readonly server = new GrpcServer({ logger: createLogger({ service: 'agent-memory-double', level: 'silent' }) });

  async start(): Promise<string> {
    this.addServices();
    const port = await this.server.listen('127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return this.server.stop(1_000);
  }

  callsOf(method: string): AgentMemoryCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  lastRequest(method: string): unknown {
    return this.callsOf(method).at(-1)?.request;
  }

  /** Records the call, throws a planted fault, and answers the caller's tenant. */
  private tenantOf(method: string, request: unknown, ctx: CallContext): string {
    this.calls.push({ method, request, principal: ctx.principal, requestId: ctx.requestId, traceId: undefined });
    const fault = this.faults.get(method);
    if (fault) {
      this.faults.delete(method);
      throw fault;
    }
    return requirePrincipal(ctx).tenantId;
  }

  private agent(tenantId: string, agentId: string): Agent {
    const row = this.agents.get(agentId);
    if (!row || row.tenantId !== tenantId) throw DomainError.notFound('Agent');
    return row.agent;
  }

  private addServices(): void {
    this.server.add('agentplatform.agents.v1.AgentService', AgentServiceService, this.agentHandlers());
    this.server.add('agentplatform.agents.v1.ChatService', ChatServiceService, this.chatHandlers());
    this.server.add('agentplatform.agents.v1.MemoryService', MemoryServiceService, this.memoryHandlers());
  }

  private agentHandlers(): Handlers<typeof AgentServiceService> {
    return {
      createAgent: async (request, ctx) => {
        const tenantId = this.tenantOf('createAgent', request, ctx);
        const now = new Date();
        const agent: Agent = {
          id: newId('agent'),
          name: request.name,
          type: request.type,
          description: request.description,
          memoryTypes: request.memoryTypes.length > 0 ? request.memoryTypes : ['semantic', 'episodic'],
          config: configOf(request.configJson),
          status: 'active',
          createdAt: now,
          updatedAt: now,
        };
        this.agents.set(agent.id, { tenantId, agent });
        return Promise.resolve({ agent });
      },
      listAgents: async (request, ctx) => {
        const tenantId = this.tenantOf('listAgents', request, ctx);
        const agents = [...this.agents.values()].filter((row) => row.tenantId === tenantId).map((row) => row.agent).reverse();
        return Promise.resolve({ agents, total: agents.length });
      },
      getAgent: async (request, ctx) => Promise.resolve({ agent: this.agent(this.tenantOf('getAgent', request, ctx), request.agentId) }),
      updateAgent: async (request, ctx) => {
        const agent = this.agent(this.tenantOf('updateAgent', request, ctx), request.agentId);
        if (request.name !== undefined) agent.name = request.name;
        if (request.type !== undefined) agent.type = request.type;
        if (request.description !== undefined || request.replace) agent.description = request.description;
        if (request.setMemoryTypes) agent.memoryTypes = request.memoryTypes;
        if (request.configJson !== undefined || request.replace) agent.config = configOf(request.configJson);
        agent.updatedAt = new Date();
        return Promise.resolve({ agent });
      },
      deleteAgent: async (request, ctx) => {
        this.agent(this.tenantOf('deleteAgent', request, ctx), request.agentId);
        this.agents.delete(request.agentId);
        return Promise.resolve({});
      },
    };
  }

  private chatHandlers(): Handlers<typeof ChatServiceService> {
    return {
      chat: async (request, ctx) => {
        this.tenantOf('chat', request, ctx);
        if (this.chatDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.chatDelayMs));
        return replyTo(request.message, request.sessionId);
      },
      streamChat: (request, ctx) => this.scriptedStream(request, ctx),
      listSessions: async (request, ctx) => {
        this.tenantOf('listSessions', request, ctx);
        const session = { agentId: request.agentId, messageCount: 2, createdAt: new Date('2026-01-02T03:04:05.006Z') };
        return Promise.resolve({
          items: [
            { ...session, id: 'ses_01JD0000000000000000000002', lastMessageAt: new Date('2026-01-02T03:04:06.007Z') },
            { ...session, id: 'ses_01JD0000000000000000000001', messageCount: 0, lastMessageAt: undefined },
          ],
          total: 7,
        });
      },
      listSessionMessages: async (request, ctx) => {
        this.tenantOf('listSessionMessages', request, ctx);
        const reply = replyTo('hello', request.sessionId);
        return Promise.resolve({
          items: [
            { id: 'msg_01JD0000000000000000000001', role: 'user', content: 'hello', usage: undefined, createdAt: new Date('2026-01-02T03:04:05.000Z') },
            { id: reply.id, role: 'assistant', content: reply.content, usage: reply.usage, createdAt: reply.createdAt },
          ],
          total: 2,
        });
      },
      deleteSession: async (request, ctx) => {
        this.tenantOf('deleteSession', request, ctx);
        return Promise.resolve({});
      },
    };
  }

  private async *scriptedStream(request: StreamChatRequest, ctx: CallContext): AsyncGenerator<StreamChatResponse> {
    this.tenantOf('streamChat', request, ctx);
    yield* this.streamChat(request, ctx);
  }

  private memoryHandlers(): Handlers<typeof MemoryServiceService> {
    const item = (fields: Partial<MemoryItem>): MemoryItem => ({
      id: 'mem_01JD0000000000000000000001',
      agentId: 'agt_01JD0000000000000000000001',
      memoryType: 'semantic',
      content: 'The customer prefers e-mail.',
      metadataJson: '{"source":"crm"}',
      createdAt: new Date('2026-01-02T03:04:05.006Z'),
      ...fields,
    });
    return {
      addMemory: async (request, ctx) => {
        this.tenantOf('addMemory', request, ctx);
        const { agentId, memoryType, content } = request;
        return Promise.resolve({ item: item({ agentId, memoryType, content, metadataJson: request.metadataJson ?? '{}' }) });
      },
      searchMemory: async (request, ctx) => {
        this.tenantOf('searchMemory', request, ctx);
        return Promise.resolve({ results: [{ item: item({ agentId: request.agentId }), score: 0.75 }] });
      },
      listMemory: async (request, ctx) => {
        this.tenantOf('listMemory', request, ctx);
        return Promise.resolve({ items: [item({ agentId: request.agentId, metadataJson: '' })], total: 1 });
      },
      deleteMemory: async (request, ctx) => {
        this.tenantOf('deleteMemory', request, ctx);
        return Promise.resolve({});
      },
      addDocument: async (request, ctx) => {
        this.tenantOf('addDocument', request, ctx);
        const document = { id: 'doc_01JD0000000000000000000001', agentId: request.agentId, title: request.title, chunks: 3, createdAt: new Date('2026-01-02T03:04:05.006Z') };
        return Promise.resolve({ document });
      },
      deleteDocument: async (request, ctx) => {
        this.tenantOf('deleteDocument', request, ctx);
        return Promise.resolve({});
      },
      consolidateMemory: async (request, ctx) => {
        this.tenantOf('consolidateMemory', request, ctx);
        return Promise.resolve({ itemsIn: 4, itemsOut: 1 });
      },
    };
  }
}
