import { ACCESS, DomainError, requireAccess, type Actor, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { hasMemoryType } from '../agents/agents.service.js';
import type { ChatModel } from '../models/chat-model.js';
import type { MemoryService } from './memory.service.js';

export interface ConsolidationOptions {
  em: EntityManager;
  agents: AgentsRepository;
  memory: MemoryService;
  model: ChatModel;
  /** The newest messages of each session stay as they are. */
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

interface PendingSession {
  id: string;
  message_count: number;
  consolidated_count: number;
}

/**
 * Consolidation: a session's older messages (all but the newest `keepMessages`) are summarised
 * by the model into semantic memory items, so what was said long ago is still found by search
 * when it no longer fits the history put into each prompt.
 */
export class ConsolidationService {
  private readonly options: ConsolidationOptions;

  constructor(options: ConsolidationOptions) {
    this.options = options;
  }

  async consolidateAgent(actor: Actor, agentId: string, signal?: AbortSignal): Promise<ConsolidationOutcome> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.options.agents.find(actor.tenantId, agentId);
    if (!agent) throw DomainError.notFound('Agent');
    if (!hasMemoryType(agent, 'semantic')) throw DomainError.validation([{ field: 'agent_id', message: 'the agent keeps no semantic memory, where summaries are stored' }]);
    return this.consolidate(agent, signal);
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
        await this.consolidate(agent, signal);
        done += 1;
      } catch (error) {
        this.options.logger.warn({ err: error, agent_id: agent.id }, 'consolidation of an agent failed; it is tried again next time');
      }
    }
    return done;
  }

  private async consolidate(agent: AgentRecord, signal?: AbortSignal): Promise<ConsolidationOutcome> {
    const { em, memory, model, keepMessages } = this.options;
    const sessions = await em.execute<PendingSession[]>(
      `select "id", "message_count", "consolidated_count" from "chat_sessions" where "agent_id" = ? and "tenant_id" = ? and "message_count" - "consolidated_count" > ? order by "created_at"`,
      [agent.id, agent.tenantId, keepMessages],
      'all',
    );
    let itemsIn = 0;
    let itemsOut = 0;
    for (const session of sessions) {
      const count = Math.min(session.message_count - session.consolidated_count - keepMessages, MESSAGES_PER_SUMMARY);
      const messages = await em.execute<{ role: string; content: string }[]>(
        `select "role", "content" from "chat_messages" where "session_id" = ? order by "seq" offset ? limit ?`,
        [session.id, session.consolidated_count, count],
        'all',
      );
      if (messages.length === 0) continue;
      const transcript = messages.map((message) => `${message.role}: ${message.content}`).join('\n');
      const summary = await model.complete({
        messages: [
          { role: 'system', content: SUMMARY_INSTRUCTIONS },
          { role: 'user', content: transcript },
        ],
        ...(agent.config.model === undefined ? {} : { model: agent.config.model }),
        ...(signal ? { signal } : {}),
      });
      const content = summary.content.trim();
      if (content.length > 0) {
        await memory.store(agent, [{ memoryType: 'semantic', content: content.slice(0, 32_000), metadata: { source: 'consolidation', session_id: session.id }, documentId: null }], new Date());
        itemsOut += 1;
      }
      itemsIn += messages.length;
      // Guarded on the count read: a concurrent run that got here first makes this a no-op.
      await em.execute(`update "chat_sessions" set "consolidated_count" = "consolidated_count" + ? where "id" = ? and "consolidated_count" = ?`, [messages.length, session.id, session.consolidated_count], 'run');
    }
    if (itemsIn > 0) {
      await em.transactional((tx) =>
        recordEvent(tx, newEvent('memory.consolidated', agent.tenantId, { agent_id: agent.id, memory_type: 'semantic', items_in: itemsIn, items_out: itemsOut })),
      );
    }
    return { itemsIn, itemsOut };
  }
}
