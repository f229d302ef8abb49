import { ACCESS, DomainError, FieldErrors, requireAccess, type Actor, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { hasMemoryType } from '../agents/agents.service.js';
import type { ChatModel } from '../models/chat-model.js';
import { CONTENT_MAX } from './memory-input.js';
import type { MemoryService } from './memory.service.js';

export interface ConsolidationOptions {
  em: EntityManager;
  agents: AgentsRepository;
  memory: MemoryService;
  model: ChatModel;
  /** The newest messages of each session the periodic job leaves as they are (CONSOLIDATION_KEEP_MESSAGES). */
  keepMessages: number;
  logger: Logger;
}

export interface ConsolidationOutcome {
  /** Episodic messages summarised. */
  itemsIn: number;
  /** Semantic items written. */
  itemsOut: number;
}

// One summary covers at most this many messages, so a prompt stays well inside any context window.
const MESSAGES_PER_SUMMARY = 40;
const SUMMARY_INSTRUCTIONS =
  'Summarise the conversation below into the durable facts worth remembering about the user and their requests: ' +
  'preferences, identifiers, decisions, open questions. Write plain sentences, no preamble.';

/** Another run consolidated these messages first. */
class Superseded extends Error {}

// An explicit call may leave at most this many of each session's newest messages alone.
const KEEP_MESSAGES_MAX = 10_000;

interface PendingSession {
  id: string;
  user_id: string | null;
  message_count: number;
  consolidated_count: number;
}

/**
 * Consolidation (decisions §14): a session's messages not yet consolidated (all but the newest
 * `keepMessages`) are summarised by the model into semantic memory items, so what was said long
 * ago is still found by search when it no longer fits the history put into each prompt. A
 * summary belongs to the session's end user, as the conversation did, and is recorded in history
 * with its session.
 */
export class ConsolidationService {
  private readonly options: ConsolidationOptions;

  constructor(options: ConsolidationOptions) {
    this.options = options;
  }

  /** The explicit call: everything not yet consolidated, the newest included, unless `keepMessages` says otherwise. */
  async consolidateAgent(actor: Actor, agentId: string, keepMessages: number | undefined, signal?: AbortSignal): Promise<ConsolidationOutcome> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.options.agents.find(actor.tenantId, agentId);
    if (!agent) throw DomainError.notFound('Agent');
    const errors = new FieldErrors();
    if (!hasMemoryType(agent, 'semantic')) errors.add('agent_id', 'the agent keeps no semantic memory, where summaries are stored');
    if (keepMessages !== undefined && !(Number.isInteger(keepMessages) && keepMessages >= 0 && keepMessages <= KEEP_MESSAGES_MAX)) {
      errors.add('keep_messages', `must be an integer from 0 to ${KEEP_MESSAGES_MAX.toLocaleString('en')}`);
    }
    errors.throwIfAny();
    return this.consolidate(agent, keepMessages ?? 0, signal);
  }

  /** Every agent with something to consolidate; one replica at a time (advisory lock). Returns the agents done. */
  async consolidateAll(signal?: AbortSignal): Promise<number> {
    const em = this.options.em.fork();
    const rows = await em.execute<{ agent_id: string; tenant_id: string }[]>(
      `select distinct s."agent_id", s."tenant_id" from "chat_sessions" s join "agents" a on a."id" = s."agent_id"
        where s."message_count" - s."consolidated_count" > ? and 'semantic' = any(a."memory_types") limit 100`,
      [this.options.keepMessages],
      'all',
    );
    let done = 0;
    for (const row of rows) {
      if (signal?.aborted) break;
      const agent = await this.options.agents.find(row.tenant_id, row.agent_id);
      if (!agent) continue;
      try {
        await this.consolidate(agent, this.options.keepMessages, signal);
        done += 1;
      } catch (error) {
        this.options.logger.warn({ err: error, agent_id: agent.id }, 'consolidation of an agent failed; it is tried again next time');
      }
    }
    return done;
  }

  private async consolidate(agent: AgentRecord, keepMessages: number, signal?: AbortSignal): Promise<ConsolidationOutcome> {
    const { em } = this.options;
    const sessions = await em.execute<PendingSession[]>(
      `select "id", "user_id", "message_count", "consolidated_count" from "chat_sessions" where "agent_id" = ? and "tenant_id" = ? and "message_count" - "consolidated_count" > ? order by "created_at"`,
      [agent.id, agent.tenantId, keepMessages],
      'all',
    );
    let itemsIn = 0;
    let itemsOut = 0;
    for (const session of sessions) {
      // One summary per MESSAGES_PER_SUMMARY messages, until the session is done.
      for (let done = session.consolidated_count; session.message_count - done > keepMessages; ) {
        const summary = await this.summarise(agent, session, done, Math.min(session.message_count - done - keepMessages, MESSAGES_PER_SUMMARY), signal);
        if (summary === undefined) break;
        itemsIn += summary.itemsIn;
        itemsOut += summary.itemsOut;
        done += summary.itemsIn;
      }
    }
    if (itemsIn > 0) {
      await em.transactional((tx) =>
        recordEvent(tx, newEvent('memory.consolidated', agent.tenantId, { agent_id: agent.id, memory_type: 'semantic', items_in: itemsIn, items_out: itemsOut })),
      );
    }
    return { itemsIn, itemsOut };
  }

  /** One summary of `count` messages from `offset`; undefined when another run got there first. */
  private async summarise(agent: AgentRecord, session: PendingSession, offset: number, count: number, signal?: AbortSignal): Promise<ConsolidationOutcome | undefined> {
    const { em, memory, model } = this.options;
    const messages = await em.execute<{ role: string; content: string }[]>(
      `select "role", "content" from "chat_messages" where "session_id" = ? order by "seq" offset ? limit ?`,
      [session.id, offset, count],
      'all',
    );
    if (messages.length === 0) return undefined;
    const transcript = messages.map((message) => `${message.role}: ${message.content}`).join('\n');
    const summary = await model.complete({
      messages: [
        { role: 'system', content: SUMMARY_INSTRUCTIONS },
        { role: 'user', content: transcript },
      ],
      ...(agent.config.model === undefined ? {} : { model: agent.config.model }),
      ...(signal ? { signal } : {}),
    });
    // Claimed with the summary, guarded on the count read: a concurrent run that got here first
    // makes this store nothing, and a crash leaves both undone.
    const claim = async () => {
      const claimed = await em.execute<{ id: string }[]>(
        `update "chat_sessions" set "consolidated_count" = ? where "id" = ? and "consolidated_count" = ? returning "id"`,
        [offset + messages.length, session.id, offset],
        'all',
      );
      if (claimed.length === 0) throw new Superseded();
    };
    const content = summary.content.trim().slice(0, CONTENT_MAX);
    try {
      if (content.length === 0) await em.transactional(claim);
      else {
        const draft = { memoryType: 'semantic' as const, content, metadata: { source: 'consolidation', session_id: session.id }, documentId: null, userId: session.user_id };
        await memory.store(agent, [draft], new Date(), { source: 'consolidation', sessionId: session.id }, { alongside: claim });
      }
    } catch (error) {
      if (error instanceof Superseded) return undefined;
      throw error;
    }
    return { itemsIn: messages.length, itemsOut: content.length === 0 ? 0 : 1 };
  }
}
