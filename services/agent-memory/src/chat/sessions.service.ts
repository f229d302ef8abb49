import { ACCESS, DomainError, isId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { ChatMessageRow, ChatSession, ToolCallStatus } from './chat.entity.js';
import type { ChatRepository } from './chat.repository.js';
import { toolCallView, type ToolCallView } from './context.js';

/** A stored message as listed: an answer with the calls it asked for, a `tool` message with its call. */
export interface SessionMessageView {
  message: ChatMessageRow;
  /** Assistant messages: completed, or awaiting_approval while one of their calls awaits a decision. Tool messages: the call's. */
  status: ToolCallStatus | 'awaiting_approval' | 'completed' | undefined;
  toolCalls: ToolCallView[];
  /** Tool messages: the name of the call they answer. */
  name: string | undefined;
  /** The run of the turn the message belongs to (decisions §16); none for turns stored before runs were. */
  runId: string | undefined;
}

/** decisions §6's session routes: an agent's conversations and what was said in them. */
export class SessionsService {
  private readonly agents: AgentsRepository;
  private readonly chat: ChatRepository;

  constructor(options: { agents: AgentsRepository; chat: ChatRepository }) {
    this.agents = options.agents;
    this.chat = options.chat;
  }

  async list(actor: Actor, agentId: string, page: Page): Promise<{ items: ChatSession[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    await this.requireAgent(actor, agentId);
    return this.chat.listSessions(actor.tenantId, agentId, page.perPage, page.offset);
  }

  async messages(actor: Actor, agentId: string, sessionId: string, page: Page): Promise<{ items: SessionMessageView[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    await this.requireAgent(actor, agentId);
    const session = isId('session', sessionId) ? await this.chat.findSession(actor.tenantId, agentId, sessionId) : null;
    if (!session) throw DomainError.notFound('Session');
    const { items, total } = await this.chat.listMessages(actor.tenantId, session.id, page.perPage, page.offset);
    const calls = await this.chat.callsOf(
      items.filter((row) => row.role === 'assistant').map((row) => row.id),
      items.flatMap((row) => (row.toolCallId === null ? [] : [row.toolCallId])),
    );
    const byAnswer = Map.groupBy(calls, (call) => call.messageId);
    const byId = new Map(calls.map((call) => [call.id, call]));
    const runs = items.length === 0 ? new Map<string, string>() : await this.chat.runsOfMessages(actor.tenantId, session.id, items[0]!.seq, items.at(-1)!.seq);
    return {
      items: items.map((message) => {
        const runId = runs.get(message.id);
        if (message.role === 'tool') {
          const call = message.toolCallId === null ? undefined : byId.get(message.toolCallId);
          return { message, status: call?.status, toolCalls: [], name: call?.name, runId };
        }
        if (message.role === 'user') return { message, status: undefined, toolCalls: [], name: undefined, runId };
        const asked = (byAnswer.get(message.id) ?? []).map(toolCallView);
        const status = asked.some((call) => call.status === 'awaiting_approval') ? 'awaiting_approval' : 'completed';
        return { message, status, toolCalls: asked, name: undefined, runId };
      }),
      total,
    };
  }

  /** Forgets the session and its messages. */
  async delete(actor: Actor, agentId: string, sessionId: string): Promise<void> {
    requireAccess(actor, ACCESS.agents.write);
    await this.requireAgent(actor, agentId);
    if (!(await this.chat.deleteSession(actor.tenantId, agentId, sessionId))) throw DomainError.notFound('Session');
  }

  private async requireAgent(actor: Actor, agentId: string): Promise<void> {
    if (!(await this.agents.find(actor.tenantId, agentId))) throw DomainError.notFound('Agent');
  }
}
