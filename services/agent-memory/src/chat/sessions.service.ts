import { ACCESS, DomainError, isId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { ChatMessageRow, ChatSession } from './chat.entity.js';
import type { ChatRepository } from './chat.repository.js';

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

  async messages(actor: Actor, agentId: string, sessionId: string, page: Page): Promise<{ items: ChatMessageRow[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    await this.requireAgent(actor, agentId);
    const session = isId('session', sessionId) ? await this.chat.findSession(actor.tenantId, agentId, sessionId) : null;
    if (!session) throw DomainError.notFound('Session');
    return this.chat.listMessages(actor.tenantId, session.id, page.perPage, page.offset);
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
