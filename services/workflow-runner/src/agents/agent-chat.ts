import { platformPrincipal, type PromiseClient } from '@agent-platform/kit/grpc';
import type { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';

export interface AgentTurn {
  tenantId: string;
  /** The workflow's author: the turn runs on their behalf. */
  userId: string;
  agentId: string;
  message: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface AgentReply {
  content: string;
  session_id: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** Where agent nodes chat: agent-memory, which also charges the tenant's credits for the turn. */
export interface AgentChat {
  chat(turn: AgentTurn): Promise<AgentReply>;
}

/**
 * Over agent-memory's streamed chat, collected into one reply: the stream is the call that stops
 * the model at once when the node is aborted (cancel, time-out), where a unary call would run on.
 * Errors arrive as DomainErrors (insufficient_credits, not_found, upstream_error).
 */
export class GrpcAgentChat implements AgentChat {
  private readonly client: PromiseClient<typeof ChatServiceService>;

  constructor(client: PromiseClient<typeof ChatServiceService>) {
    this.client = client;
  }

  async chat(turn: AgentTurn): Promise<AgentReply> {
    // The least role that may chat with an agent (decisions §3); the author's own may have changed.
    const principal = platformPrincipal(turn, 'member');
    const events = this.client.streamChat({ agentId: turn.agentId, message: turn.message }, { principal, deadlineMs: turn.timeoutMs, signal: turn.signal });
    for await (const event of events) {
      const reply = event.completed;
      if (reply) {
        const usage = reply.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        return {
          content: reply.content,
          session_id: reply.sessionId,
          usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens },
        };
      }
    }
    throw new Error('agent-memory ended the turn without a reply');
  }
}
