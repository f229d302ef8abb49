import { activeTraceId, DomainError, isLeasedTrigger, type Clock, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import { extractsMemory } from '../agents/agents.service.js';
import type { ExtractionJob } from '../memory/extraction.repository.js';
import type { ChatCompletion } from '../models/chat-model.js';
import { RunCancelled } from '../runs/run-cancelled.js';
import type { ClaimedRun } from '../runs/run-leases.js';
import type { RunProgress, RunsRepository } from '../runs/runs.repository.js';
import type { ChatRepository, NewMessage, NewToolCall } from './chat.repository.js';
import { usedMemory } from './context.js';
import { chargeServed, roundCharge, turnCost, type Credits } from './credits.js';
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
    if (run.queued) {
      // A background run's row is there since it was queued; its worker claimed it running.
      await this.options.em.transactional(() => this.options.runs.restart(run.id, turn.agent.version, run.steps));
      run.stored = true;
      run.steps = [];
      return;
    }
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
    const progress = this.progressOf(turn, status, null, error, ended ? new Date(clock.now()) : null);
    const recorded = await em.transactional(async (tx) => {
      if (!(await runs.progress(turn.run.id, progress, turn.run.steps))) return false;
      if (status === 'failed' && turn.run.trigger === 'background') await recordRunFailed(tx, turn.actor.tenantId, turn.run.id, turn.agent.id, { ...progress, durationMs: progress.completedAt!.getTime() - turn.startedAt.getTime() });
      return true;
    });
    if (!recorded) throw new RunCancelled(turn.run.id);
    turn.run.steps = [];
  }

  /** A queued run that never became a turn (its session went, its balance ran out): failed with why. */
  async failQueued(run: Pick<ClaimedRun, 'id' | 'tenantId' | 'agentId' | 'queuedAt'>, error: unknown): Promise<void> {
    const none = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const completedAt = new Date(this.options.clock.now());
    const progress = { status: 'failed' as const, output: null, usage: none, credits: 0, error: reasonOf(error), completedAt, sessionId: null };
    await this.options.em.transactional(async (tx) => {
      if (await this.options.runs.progress(run.id, progress, [])) await recordRunFailed(tx, run.tenantId, run.id, run.agentId, { ...progress, durationMs: completedAt.getTime() - run.queuedAt.getTime() });
    });
  }

  /**
   * Records why a turn ended without its answer (`cancelled`: its caller went away). Never throws: the turn's own failure is what its
   * caller must hear, not a second one met while recording it.
   */
  async fail(turn: Turn, error: unknown, cancelled = turn.context.signal.aborted): Promise<void> {
    // A cancelled run was ended by its cancel already; a background run whose replica stops is
    // taken up again once its lease runs out.
    if (!turn.run.stored || error instanceof RunCancelled || (cancelled && isLeasedTrigger(turn.run.trigger))) return;
    const reason = cancelled ? { code: 'cancelled', message: 'The caller went away before the turn finished.' } : reasonOf(error);
    try {
      await this.record(turn, cancelled ? 'cancelled' : 'failed', reason);
    } catch (recording) {
      if (!(recording instanceof RunCancelled)) this.options.logger.warn({ err: recording, run_id: turn.run.id }, 'could not record how a run ended');
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
    // An eval's turn is a test: what it says of an end user must not become their memory.
    const extracting = status === 'completed' && turn.run.trigger !== 'eval' && extractsMemory(turn.agent, turn.userId ?? undefined);
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
      const progress = { ...this.progressOf(turn, status, completed ? answer.content : null, null, completed ? answer.at : null), sessionId: turn.sessionId };
      // A background run cancelled while its model answered: nothing of the turn is kept.
      if (!(await this.options.runs.progress(turn.run.id, progress, turn.run.steps))) throw new RunCancelled(turn.run.id);
      if (completed && turn.run.trigger === 'background') {
        const ended = { ...progress, durationMs: answer.at.getTime() - turn.startedAt.getTime() };
        await recordEvent(tx, newEvent('run.completed', tenantId, runEndData(turn.run.id, turn.agent.id, ended, { output: answer.content }), answer.at));
      }
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
      charge: roundCharge(messageId, turn.agent.id, amount),
      requestId: turn.context.requestId,
      markCharged: () => chat.markCharged(messageId, new Date(clock.now())),
      log: logger,
      what: 'chat turn',
    };
    await chargeServed(credits, served, clock);
  }
}

type EndedRun = RunProgress & { durationMs: number };

/** decisions §16: what run.completed and run.failed carry. */
function runEndData(runId: string, agentId: string, run: EndedRun, outcome: { output: string } | { error: RunProgress['error'] }): Record<string, unknown> {
  return { run_id: runId, agent_id: agentId, session_id: run.sessionId, status: run.status, ...outcome, credits: run.credits, duration_ms: Math.max(0, run.durationMs) };
}

async function recordRunFailed(tx: EntityManager, tenantId: string, runId: string, agentId: string, run: EndedRun): Promise<void> {
  await recordEvent(tx, newEvent('run.failed', tenantId, runEndData(runId, agentId, run, { error: run.error }), run.completedAt!));
}

/** Why a run failed, as its caller was answered: a §2 code and its text, never a stack or SQL. */
function reasonOf(error: unknown): { code: string; message: string } {
  return error instanceof DomainError ? { code: error.code, message: error.message } : { code: 'internal_error', message: 'The turn failed unexpectedly.' };
}

/** What a model round used and costs, as its answer is stored. */
export function roundOf(completion: ChatCompletion, memories: Turn['memories']): NonNullable<NewMessage['round']> {
  return { ...completion.usage, model: completion.model, credits: turnCost(completion.usage.totalTokens), memories: memories.map(usedMemory) };
}
