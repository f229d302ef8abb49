import { DomainError, type Clock, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import { extractsMemory } from '../agents/agents.service.js';
import type { ExtractionJob } from '../memory/extraction.repository.js';
import type { ChatCompletion } from '../models/chat-model.js';
import type { ChatRepository, NewMessage, NewToolCall } from './chat.repository.js';
import { usedMemory } from './context.js';
import { chargeServed, turnCost, type Credits } from './credits.js';
import { replyOf, type Answer, type ChatReply, type Turn } from './turn.js';

export interface TurnStoreOptions {
  em: EntityManager;
  chat: ChatRepository;
  credits: Credits;
  /** Where a finished turn of an agent that extracts memory is queued (in the turn's transaction), and who is told after. */
  extraction: { enqueue(job: ExtractionJob, now: Date): Promise<void>; queued(): void };
  logger: Logger;
  /** When a charge was taken, and the waits between the attempts at one. */
  clock: Clock;
}

/** Storing and charging a turn: what it has not stored yet goes in at once, then each round is charged. */
export class TurnStore {
  private readonly options: TurnStoreOptions;

  constructor(options: TurnStoreOptions) {
    this.options = options;
  }

  /**
   * Writes what the turn has not stored yet, with its events, in one transaction; then charges
   * each model round it stored (idempotently on the round's message id).
   */
  async store(turn: Turn, answer: Answer, status: ChatReply['status'], waiting: readonly NewToolCall[]): Promise<ChatReply> {
    const { em, chat } = this.options;
    const tenantId = turn.actor.tenantId;
    const data = { agent_id: turn.agent.id, conversation_id: turn.sessionId };
    const unsaved = turn.unsaved;
    const extracting = status === 'completed' && extractsMemory(turn.agent, turn.userId ?? undefined);
    await em.transactional(async (tx) => {
      const stored = await chat.append({
        sessionId: turn.sessionId,
        isNewSession: turn.isNewSession,
        userId: turn.userId,
        tenantId,
        agentId: turn.agent.id,
        messages: unsaved.messages,
        calls: unsaved.calls,
      });
      if (!stored) throw DomainError.notFound(turn.isNewSession ? 'Agent' : 'Session');
      if (turn.userMessage) {
        await recordEvent(tx, newEvent('agent.message.created', tenantId, { ...data, message_id: turn.userMessage.id, role: 'user', content: turn.userMessage.content }, turn.startedAt));
      }
      if (status === 'completed') {
        const latency = answer.at.getTime() - turn.startedAt.getTime();
        await recordEvent(
          tx,
          newEvent('agent.message.completed', tenantId, { ...data, message_id: answer.id, content: answer.content, tokens_used: turn.usage.totalTokens, latency_ms: latency }, answer.at),
        );
        if (extracting) {
          await this.options.extraction.enqueue({ messageId: answer.id, tenantId, agentId: turn.agent.id, sessionId: turn.sessionId, userId: turn.userId, actor: turn.actor }, answer.at);
        }
      }
      for (const call of waiting) {
        await recordEvent(
          tx,
          newEvent('agent.tool_call.approval_requested', tenantId, { agent_id: turn.agent.id, session_id: turn.sessionId, call_id: call.id, name: call.name, arguments: call.arguments }, answer.at),
        );
      }
    });
    turn.isNewSession = false;
    turn.userMessage = undefined;
    turn.unsaved = { messages: [], calls: [] };
    for (const message of unsaved.messages) if (message.round) await this.charge(turn, message.id, message.round.credits);
    // After the turn's own work: its extraction then competes with the reply less.
    if (extracting) this.options.extraction.queued();
    return replyOf(turn, answer, status);
  }

  /**
   * The reply is stored and answered whatever happens here (chargeServed never throws).
   */
  private async charge(turn: Turn, messageId: string, amount: number): Promise<void> {
    const { credits, chat, logger, clock } = this.options;
    const served = {
      actor: turn.actor,
      charge: { amount, reference: messageId, description: `Chat with agent ${turn.agent.id}` },
      requestId: turn.context.requestId,
      markCharged: () => chat.markCharged(messageId, new Date(clock.now())),
      log: logger,
      what: 'chat turn',
    };
    await chargeServed(credits, served, clock);
  }
}

/** What a model round used and costs, as its answer is stored. */
export function roundOf(completion: ChatCompletion, memories: Turn['memories']): NonNullable<NewMessage['round']> {
  return { ...completion.usage, model: completion.model, credits: turnCost(completion.usage.totalTokens), memories: memories.map(usedMemory) };
}
