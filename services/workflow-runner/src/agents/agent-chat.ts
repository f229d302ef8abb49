import type { Actor } from '@agent-platform/kit';
import { platformPrincipal, principalOf, type Principal, type PromiseClient } from '@agent-platform/kit/grpc';
import type { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';

/**
 * Who saved a workflow's graph (decisions §12.12): a user, or an API key with its scopes. Stored
 * with the workflow and copied onto each execution, since an execution outlives the request that
 * saved the graph; its agent nodes chat as this principal, so a key's scopes hold through the
 * workflows it saved (saving an agent node needs agents:write, and the agent's tools then need
 * what they need of the key).
 */
export interface GraphAuthor {
  kind: 'user' | 'api_key';
  userId: string;
  apiKeyId: string | null;
  scopes: string[];
}

export function graphAuthorOf(actor: Actor): GraphAuthor {
  return { kind: actor.kind, userId: actor.userId, apiKeyId: actor.apiKeyId ?? null, scopes: [...actor.scopes] };
}

export interface AgentTurn {
  tenantId: string;
  /** Who saved the graph: the turn runs on their behalf. */
  author: GraphAuthor;
  agentId: string;
  message: string;
  /** The end user whose message it is (decisions §14); undefined: none. */
  userId: string | undefined;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface AgentReply {
  content: string;
  session_id: string;
  /** The turn's run in agent-memory (decisions §16): its steps are at GET /runs/{run_id}. */
  run_id: string;
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
    const principal = principalOfAuthor(turn.tenantId, turn.author);
    const events = this.client.streamChat({ agentId: turn.agentId, message: turn.message, userId: turn.userId, trigger: 'workflow' }, { principal, deadlineMs: turn.timeoutMs, signal: turn.signal });
    for await (const event of events) {
      const reply = event.completed;
      if (reply) {
        const usage = reply.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        return {
          content: reply.content,
          session_id: reply.sessionId,
          run_id: reply.runId,
          usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens },
        };
      }
    }
    throw new Error('agent-memory ended the turn without a reply');
  }
}

/**
 * As the author, at the least role that may chat with an agent (decisions §3): agent-memory asks
 * identity at each tool call what the author may do now, and never grants more than this. A key
 * keeps its id and scopes, so it is confirmed, and held to them, as when it calls itself.
 */
function principalOfAuthor(tenantId: string, author: GraphAuthor): Principal {
  if (author.kind === 'api_key' && author.apiKeyId !== null) {
    return principalOf({ kind: 'api_key', userId: author.userId, apiKeyId: author.apiKeyId, tenantId, role: 'member', scopes: author.scopes });
  }
  return platformPrincipal({ userId: author.userId, tenantId }, 'member');
}
