import type { EntityManager } from '@agent-platform/kit/db';
import { ChatMessageRow, ChatSession, OPEN_TOOL_CALL_STATUSES, ToolCallRow, type MessageRole, type ToolCallStatus, type UsedMemory } from './chat.entity.js';

/** A message to append; its place in the session (`seq`) is given when it is written. */
export interface NewMessage {
  id: string;
  role: MessageRole;
  content: string;
  toolCallId: string | null;
  /** Assistant messages: what the model round used and costs. */
  round: { promptTokens: number; completionTokens: number; totalTokens: number; model: string; credits: number; memories: UsedMemory[] } | null;
  createdAt: Date;
}

export type NewToolCall = Omit<ToolCallRow, 'decidedBy' | 'decidedAt' | 'decisionComment'>;

export interface Appended {
  sessionId: string;
  isNewSession: boolean;
  /** The end user of a new session; an existing one keeps its own. */
  userId?: string | null;
  tenantId: string;
  agentId: string;
  messages: readonly NewMessage[];
  calls: readonly NewToolCall[];
}

/** A call's end: its outcome, and the `tool` message that gives it to the model. */
export interface FinishedCall {
  status: Extract<ToolCallStatus, 'completed' | 'failed' | 'rejected'>;
  result: unknown;
  error: string | null;
  errorCode: string | null;
  durationMs: number | null;
  finishedAt: Date;
  message: NewMessage;
}

/** Sessions, their messages and the tool calls in them. Every read takes the tenant (and agent) id. */
export class ChatRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  findSession(tenantId: string, agentId: string, id: string): Promise<ChatSession | null> {
    return this.em.findOne(ChatSession, { id, tenantId, agentId });
  }

  /** The last `limit` messages of a session before position `beforeSeq` (default: all), oldest first. */
  async recentMessages(sessionId: string, limit: number, beforeSeq = Number.MAX_SAFE_INTEGER): Promise<ChatMessageRow[]> {
    if (limit === 0) return [];
    const newestFirst = await this.em.find(ChatMessageRow, { sessionId, seq: { $lt: beforeSeq } }, { orderBy: { seq: 'desc' }, limit });
    return newestFirst.reverse();
  }

  /**
   * The turn an answer belongs to: its own messages (from its user message on) and up to
   * `historyMessages` before them, oldest first. Null when the answer or its user message is gone.
   */
  async turnOf(sessionId: string, answerId: string, historyMessages: number): Promise<{ before: ChatMessageRow[]; own: ChatMessageRow[] } | null> {
    const answer = await this.em.findOne(ChatMessageRow, { id: answerId, sessionId });
    if (!answer) return null;
    const user = await this.em.findOne(ChatMessageRow, { sessionId, role: 'user', seq: { $lt: answer.seq } }, { orderBy: { seq: 'desc' } });
    if (!user) return null;
    const own = await this.em.find(ChatMessageRow, { sessionId, seq: { $gte: user.seq } }, { orderBy: { seq: 'asc' } });
    return { before: await this.recentMessages(sessionId, historyMessages, user.seq), own };
  }

  /**
   * In the caller's transaction: holds the agent (a concurrent delete waits, or went first and
   * nothing is written), then creates or extends the session and appends the messages and calls.
   * False when the agent or the session is gone.
   */
  async append(turn: Appended): Promise<boolean> {
    const held = await this.em.execute<{ id: string }[]>(`select "id" from "agents" where "id" = ? and "tenant_id" = ? for share`, [turn.agentId, turn.tenantId], 'all');
    if (held.length === 0) return false;
    const count = turn.messages.length;
    const lastAt = turn.messages.at(-1)?.createdAt ?? new Date();
    let firstSeq = 1;
    if (turn.isNewSession) {
      await this.em.insert(ChatSession, {
        id: turn.sessionId,
        tenantId: turn.tenantId,
        agentId: turn.agentId,
        userId: turn.userId ?? null,
        messageCount: count,
        consolidatedCount: 0,
        createdAt: turn.messages[0]?.createdAt ?? lastAt,
        lastMessageAt: lastAt,
      });
    } else {
      // The row lock this takes also orders concurrent turns of the session: positions never collide.
      const updated = await this.em.execute<{ message_count: number }[]>(
        `update "chat_sessions" set "message_count" = "message_count" + ?, "last_message_at" = ? where "id" = ? and "tenant_id" = ? returning "message_count"`,
        [count, lastAt, turn.sessionId, turn.tenantId],
        'all',
      );
      // The session was deleted while the model answered.
      if (updated[0] === undefined) return false;
      firstSeq = updated[0].message_count - count + 1;
    }
    await this.em.insertMany(
      ChatMessageRow,
      turn.messages.map((message, index) => ({
        id: message.id,
        tenantId: turn.tenantId,
        sessionId: turn.sessionId,
        seq: firstSeq + index,
        role: message.role,
        content: message.content,
        toolCallId: message.toolCallId,
        promptTokens: message.round?.promptTokens ?? null,
        completionTokens: message.round?.completionTokens ?? null,
        totalTokens: message.round?.totalTokens ?? null,
        model: message.round?.model ?? null,
        credits: message.round?.credits ?? null,
        chargedAt: null,
        memories: message.round?.memories ?? null,
        createdAt: message.createdAt,
      })),
    );
    if (turn.calls.length > 0) {
      await this.em.insertMany(
        ToolCallRow,
        turn.calls.map((call) => ({ ...call, decidedBy: null, decidedAt: null, decisionComment: null })),
      );
    }
    return true;
  }

  /** Model rounds stored before `before` and not charged yet, oldest first, with their agent. */
  unchargedRounds(before: Date, limit: number): Promise<{ id: string; tenant_id: string; agent_id: string; credits: number }[]> {
    return this.em.execute(
      `select "m"."id", "m"."tenant_id", "s"."agent_id", "m"."credits" from "chat_messages" as "m" join "chat_sessions" as "s" on "s"."id" = "m"."session_id"
        where "m"."credits" is not null and "m"."charged_at" is null and "m"."created_at" < ? order by "m"."created_at" limit ?`,
      [before, limit],
      'all',
    );
  }

  async markCharged(messageId: string, at: Date): Promise<void> {
    await this.em.execute(`update "chat_messages" set "charged_at" = ? where "id" = ?`, [at, messageId], 'run');
  }

  findCall(tenantId: string, sessionId: string, id: string): Promise<ToolCallRow | null> {
    return this.em.findOne(ToolCallRow, { id, tenantId, sessionId });
  }

  /** The calls asked for by these messages, and those with these ids, in each message's order. */
  callsOf(messageIds: readonly string[], callIds: readonly string[] = []): Promise<ToolCallRow[]> {
    if (messageIds.length === 0 && callIds.length === 0) return Promise.resolve([]);
    return this.em.find(ToolCallRow, { $or: [{ messageId: { $in: [...messageIds] } }, { id: { $in: [...callIds] } }] }, { orderBy: [{ messageId: 'asc' }, { position: 'asc' }] });
  }

  /** Calls of the session still waiting for a decision, or decided and running. */
  openCalls(tenantId: string, sessionId: string): Promise<ToolCallRow[]> {
    return this.em.find(ToolCallRow, { tenantId, sessionId, status: { $in: [...OPEN_TOOL_CALL_STATUSES] } });
  }

  /**
   * Decides a call that awaits it, atomically: of two racing decisions, one gets the row and the
   * other null. The call becomes `approved`, decided and not finished: an approval runs it, then
   * `finish`es it; a rejection `finish`es it as rejected in the same transaction.
   */
  async decide(tenantId: string, sessionId: string, id: string, decision: { approve: boolean; by: string; at: Date; comment: string | null }): Promise<ToolCallRow | null> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update "tool_calls" set "status" = 'approved', "decided_by" = ?, "decided_at" = ?, "decision_comment" = ?
       where "id" = ? and "tenant_id" = ? and "session_id" = ? and "status" = 'awaiting_approval' returning "id"`,
      [decision.by, decision.at, decision.comment, id, tenantId, sessionId],
      'all',
    );
    if (rows.length === 0) return null;
    return this.em.findOne(ToolCallRow, { id }, { refresh: true });
  }

  /**
   * In the caller's transaction: ends an `approved` call and appends its `tool` message. The
   * message that asked for the call is locked first, so of the calls of one answer finishing at
   * once exactly one sees none left open: that one continues the turn. Returns how many are left.
   */
  async finish(call: ToolCallRow, agentId: string, finished: FinishedCall): Promise<number | null> {
    await this.em.execute(`select "id" from "chat_messages" where "id" = ? for update`, [call.messageId], 'all');
    const updated = await this.em.execute<{ affectedRows: number }>(
      `update "tool_calls" set "status" = ?, "result" = ?, "error" = ?, "error_code" = ?, "duration_ms" = ?, "finished_at" = ? where "id" = ? and "status" = 'approved'`,
      [finished.status, finished.result === undefined ? null : JSON.stringify(finished.result), finished.error, finished.errorCode, finished.durationMs, finished.finishedAt, call.id],
      'run',
    );
    if (updated.affectedRows === 0) return null;
    const appended = await this.append({ sessionId: call.sessionId, isNewSession: false, tenantId: call.tenantId, agentId, messages: [finished.message], calls: [] });
    if (!appended) return null;
    const [left] = await this.em.execute<{ open: string }[]>(
      `select count(*) as "open" from "tool_calls" where "message_id" = ? and "status" in ('awaiting_approval', 'approved')`,
      [call.messageId],
      'all',
    );
    return Number(left?.open ?? 0);
  }

  /** Newest first. */
  async listSessions(tenantId: string, agentId: string, limit: number, offset: number): Promise<{ items: ChatSession[]; total: number }> {
    const [items, total] = await this.em.findAndCount(ChatSession, { tenantId, agentId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /** Oldest first. */
  async listMessages(tenantId: string, sessionId: string, limit: number, offset: number): Promise<{ items: ChatMessageRow[]; total: number }> {
    const [items, total] = await this.em.findAndCount(ChatMessageRow, { tenantId, sessionId }, { orderBy: { seq: 'asc' }, limit, offset });
    return { items, total };
  }

  /**
   * The run each of the session's messages from `fromSeq` to `toSeq` belongs to: its turn's, found
   * by the user message that began the turn (decisions §16). Messages stored before runs were kept
   * have none.
   */
  async runsOfMessages(tenantId: string, sessionId: string, fromSeq: number, toSeq: number): Promise<Map<string, string>> {
    const rows = await this.em.execute<{ id: string; run_id: string | null }[]>(
      `select "m"."id", (
         select "r"."id" from "runs" as "r" where "r"."tenant_id" = "m"."tenant_id" and "r"."message_id" = (
           select "u"."id" from "chat_messages" as "u" where "u"."session_id" = "m"."session_id" and "u"."role" = 'user' and "u"."seq" <= "m"."seq" order by "u"."seq" desc limit 1)
       ) as "run_id"
       from "chat_messages" as "m" where "m"."tenant_id" = ? and "m"."session_id" = ? and "m"."seq" between ? and ?`,
      [tenantId, sessionId, fromSeq, toSeq],
      'all',
    );
    return new Map(rows.flatMap((row) => (row.run_id === null ? [] : [[row.id, row.run_id] as const])));
  }

  /** The session, its messages and calls, and its runs (they hold its messages' text). */
  async deleteSession(tenantId: string, agentId: string, id: string): Promise<boolean> {
    const [row] = await this.em.execute<{ deleted: number }[]>(
      `with "session" as (
         delete from "chat_sessions" where "id" = ? and "tenant_id" = ? and "agent_id" = ? returning "id"
       ), "runs" as (
         delete from "runs" where "session_id" in (select "id" from "session") and "tenant_id" = ?
       )
       select count(*)::int as "deleted" from "session"`,
      [id, tenantId, agentId, tenantId],
      'all',
    );
    return (row?.deleted ?? 0) > 0;
  }
}
