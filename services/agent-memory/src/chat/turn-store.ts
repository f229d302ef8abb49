import { activeTraceId, DomainError, type Clock, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import { extractsMemory } from '../agents/agents.service.js';
import type { ExtractionJob } from '../memory/extraction.repository.js';
import type { ChatCompletion } from '../models/chat-model.js';
import type { RunProgress, RunsRepository } from '../runs/runs.repository.js';
import type { ChatRepository, NewMessage, NewToolCall } from './chat.repository.js';
import { usedMemory } from './context.js';
import { chargeServed, turnCost, type Credits } from './credits.js';
import { replyOf, type Answer, type ChatReply, type Turn } from './turn.js';

export interface TurnStoreOptions {
  em: EntityManager;
  chat: ChatRepository;
  runs: RunsRepository;
  credits: Credits;
  /** Where a finished turn of an agent that extracts memory is queued (in the turn's transaction), and who is told after. */
  extraction: { enqueue(job: ExtractionJob, now: Date): Promise<void>; queued(): void };
  logger: Logger;
  /** When a charge was taken, and the waits between the attempts at one. */
  clock: Clock;
}

/**
 * Storing and charging a turn: what it has not stored yet goes in at once, then each round is
 * charged. Its run (decisions §16) is stored as it begins, and again with its steps whenever the
 * turn stores anything, stops for a decision, goes on after one, or fails.
 */
export class TurnStore {
  private readonly options: TurnStoreOptions;

  constructor(options: TurnStoreOptions) {
    this.options = options;
  }

  /** Stores the run a turn is, as it begins, with its steps so far; not_found when its agent is gone. */
  async begin(turn: Turn): Promise<void> {
    const run = turn.run;
    const started = await this.options.runs.start({
      id: run.id,
      tenantId: turn.actor.tenantId,
      agentId: turn.agent.id,
      agentVersion: turn.agent.version,
      // A new session is stored with the turn's first messages; until then the run names none.
      sessionId: turn.isNewSession ? null : turn.sessionId,
      userId: turn.userId,
      trigger: run.trigger,
      status: 'running',
      input: run.input,
      parentRunId: run.parentRunId,
      traceId: activeTraceId(),
      messageId: run.messageId,
      startedAt: turn.startedAt,
    }, run.steps);
    if (!started) throw DomainError.notFound('Agent');
    run.stored = true;
    run.steps = [];
  }

  /**
   * The run's state and the steps it has not stored yet: a turn that stops for a decision, goes
   * on after one, or ends without its answer (`error`: why; the caller's leaving is `cancelled`).
   */
  async record(turn: Turn, status: 'running' | 'awaiting_approval' | 'failed' | 'cancelled', error: RunProgress['error'] = null): Promise<void> {
    if (status === 'running' && turn.run.steps.length === 0) return;
    const { em, runs, clock } = this.options;
    const ended = status === 'failed' || status === 'cancelled';
    await em.transactional(() => runs.progress(turn.run.id, this.progressOf(turn, status, null, error, ended ? new Date(clock.now()) : null), turn.run.steps));
    turn.run.steps = [];
  }

  /**
   * Records why a turn ended without its answer (`cancelled`: its caller went away). Never throws: the turn's own failure is what its
   * caller must hear, not a second one met while recording it.
   */
  async fail(turn: Turn, error: unknown, cancelled = turn.context.signal.aborted): Promise<void> {
    if (!turn.run.stored) return;
    const reason = cancelled
      ? { code: 'cancelled', message: 'The caller went away before the turn finished.' }
      : error instanceof DomainError
        ? { code: error.code, message: error.message }
        : { code: 'internal_error', message: 'The turn failed unexpectedly.' };
    try {
      await this.record(turn, cancelled ? 'cancelled' : 'failed', reason);
    } catch (recording) {
      this.options.logger.warn({ err: recording, run_id: turn.run.id }, 'could not record how a run ended');
    }
  }

  private progressOf(turn: Turn, status: RunProgress['status'], output: string | null, error: RunProgress['error'], completedAt: Date | null): RunProgress {
    const sessionId = turn.isNewSession ? null : turn.sessionId;
    return { status, output, usage: turn.usage, credits: turn.credits, error, completedAt, sessionId };
  }

  /**
   * Writes what the turn has not stored yet, with its events and its run, in one transaction; then charges
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
          await this.options.extraction.enqueue({ messageId: answer.id, tenantId, agentId: turn.agent.id, sessionId: turn.sessionId, userId: turn.userId, runId: turn.run.id, actor: turn.actor }, answer.at);
        }
      }
      for (const call of waiting) {
        await recordEvent(
          tx,
          newEvent('agent.tool_call.approval_requested', tenantId, { agent_id: turn.agent.id, session_id: turn.sessionId, call_id: call.id, name: call.name, arguments: call.arguments }, answer.at),
        );
      }
      const completed = status === 'completed';
      await this.options.runs.progress(turn.run.id, { ...this.progressOf(turn, status, completed ? answer.content : null, null, completed ? answer.at : null), sessionId: turn.sessionId }, turn.run.steps);
    });
    turn.run.steps = [];
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
