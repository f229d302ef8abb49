import type { EntityManager } from '@agent-platform/kit/db';
import { ChatMessageRow, ChatSession } from './chat.entity.js';

export interface StoredTurn {
  sessionId: string;
  isNewSession: boolean;
  tenantId: string;
  agentId: string;
  user: { id: string; content: string; createdAt: Date };
  reply: {
    id: string;
    content: string;
    promptTokens: number;
    completionTokens: number;
    totalTokens: number;
    model: string;
    credits: number;
    createdAt: Date;
  };
}

/** Sessions and their messages. Every read takes the tenant (and agent) id. */
export class ChatRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  findSession(tenantId: string, agentId: string, id: string): Promise<ChatSession | null> {
    return this.em.findOne(ChatSession, { id, tenantId, agentId });
  }

  /** The last `limit` messages of a session, oldest first. */
  async recentMessages(sessionId: string, limit: number): Promise<ChatMessageRow[]> {
    if (limit === 0) return [];
    const newestFirst = await this.em.find(ChatMessageRow, { sessionId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit });
    return newestFirst.reverse();
  }

  /**
   * In the caller's transaction: holds the agent (a concurrent delete waits, or went first and
   * the turn is refused), then writes the session and both messages. False when the agent is gone.
   */
  async storeTurn(turn: StoredTurn): Promise<boolean> {
    const held = await this.em.execute<{ id: string }[]>(`select "id" from "agents" where "id" = ? and "tenant_id" = ? for share`, [turn.agentId, turn.tenantId], 'all');
    if (held.length === 0) return false;
    if (turn.isNewSession) {
      await this.em.insert(ChatSession, {
        id: turn.sessionId,
        tenantId: turn.tenantId,
        agentId: turn.agentId,
        messageCount: 2,
        consolidatedCount: 0,
        createdAt: turn.user.createdAt,
        lastMessageAt: turn.reply.createdAt,
      });
    } else {
      const updated = await this.em.execute<{ affectedRows: number }>(
        `update "chat_sessions" set "message_count" = "message_count" + 2, "last_message_at" = ? where "id" = ? and "tenant_id" = ?`,
        [turn.reply.createdAt, turn.sessionId, turn.tenantId],
        'run',
      );
      // The session was deleted while the model answered.
      if (updated.affectedRows === 0) return false;
    }
    await this.em.insertMany(ChatMessageRow, [
      { id: turn.user.id, tenantId: turn.tenantId, sessionId: turn.sessionId, role: 'user', content: turn.user.content, promptTokens: null, completionTokens: null, totalTokens: null, model: null, credits: null, chargedAt: null, createdAt: turn.user.createdAt },
      {
        id: turn.reply.id,
        tenantId: turn.tenantId,
        sessionId: turn.sessionId,
        role: 'assistant',
        content: turn.reply.content,
        promptTokens: turn.reply.promptTokens,
        completionTokens: turn.reply.completionTokens,
        totalTokens: turn.reply.totalTokens,
        model: turn.reply.model,
        credits: turn.reply.credits,
        chargedAt: null,
        createdAt: turn.reply.createdAt,
      },
    ]);
    return true;
  }

  async markCharged(messageId: string, at: Date): Promise<void> {
    await this.em.execute(`update "chat_messages" set "charged_at" = ? where "id" = ?`, [at, messageId], 'run');
  }

  /** Newest first. */
  async listSessions(tenantId: string, agentId: string, limit: number, offset: number): Promise<{ items: ChatSession[]; total: number }> {
    const [items, total] = await this.em.findAndCount(ChatSession, { tenantId, agentId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /** Oldest first. */
  async listMessages(tenantId: string, sessionId: string, limit: number, offset: number): Promise<{ items: ChatMessageRow[]; total: number }> {
    const [items, total] = await this.em.findAndCount(ChatMessageRow, { tenantId, sessionId }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], limit, offset });
    return { items, total };
  }

  async deleteSession(tenantId: string, agentId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(ChatSession, { id, tenantId, agentId })) > 0;
  }
}
