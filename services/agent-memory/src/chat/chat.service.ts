import { ACCESS, DomainError, requireAccess, type Actor } from '@agent-platform/kit';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { approvalStep, toolStep } from '../runs/run-steps.js';
import { Approvals, type ApprovalsOptions, type DecisionRequest } from './approvals.js';
import { ToolLoop, type ToolLoopOptions } from './tool-loop.js';
import { TurnAssembly, type ChatTurnRequest, type TurnAssemblyOptions } from './turn-assembly.js';
import { TurnStore, type TurnStoreOptions } from './turn-store.js';
import { replyOf, type ChatReply, type Turn, type TurnContext, type TurnEvent } from './turn.js';

export type { DecisionRequest } from './approvals.js';
export type { ChatTurnRequest } from './turn-assembly.js';
export type { ChatReply, TurnContext, TurnEvent, TurnTools } from './turn.js';

/** What every part of a turn needs, given once; each part's options say what it is for. */
export interface ChatServiceOptions extends Omit<TurnAssemblyOptions, 'approvals'>, ApprovalsOptions, Omit<ToolLoopOptions, 'store'>, TurnStoreOptions {
  agents: AgentsRepository;
}

/**
 * A chat turn (decisions §6, §12): checked and charged through identity, its context built from
 * the session's history (episodic memory) and the agent's most relevant memories, answered by the
 * model, which may call the agent's tools for up to `max_tool_rounds` rounds. A turn is stored
 * whole or not at all, its events with it; one that stops for an approval is stored up to there,
 * and the decision continues it.
 *
 * The parts: TurnAssembly builds a turn, ToolLoop runs its model rounds, Approvals decides its
 * calls that wait, TurnStore stores and charges it.
 */
export class ChatService {
  private readonly agents: AgentsRepository;
  private readonly modelName: string;
  private readonly assembly: TurnAssembly;
  private readonly approvals: Approvals;
  private readonly store: TurnStore;
  private readonly loop: ToolLoop;

  constructor(options: ChatServiceOptions) {
    this.agents = options.agents;
    this.modelName = options.model.name;
    this.approvals = new Approvals(options);
    this.assembly = new TurnAssembly({ ...options, approvals: this.approvals });
    this.store = new TurnStore(options);
    this.loop = new ToolLoop({ ...options, store: this.store });
  }

  /** The reply once the turn is done (or waits for an approval). */
  async chat(actor: Actor, request: ChatTurnRequest, context: TurnContext): Promise<ChatReply> {
    return lastReply(this.stream(actor, request, context, false));
  }

  /** The turn's events as they happen; with `streaming`, the model's text comes in pieces. */
  async *stream(actor: Actor, request: ChatTurnRequest, context: TurnContext, streaming = true): AsyncGenerator<TurnEvent, void, undefined> {
    requireAccess(actor, ACCESS.agents.write);
    const agent = await this.requireAgent(actor, request.agentId);
    const turn = await this.assembly.begin(actor, agent, request, context);
    await this.store.begin(turn);
    yield { started: { runId: turn.run.id } };
    yield* this.recorded(turn, this.loop.run(turn, streaming));
  }

  /** Approves or rejects a call that awaits it, then continues the turn as a chat call would. */
  async decide(actor: Actor, request: DecisionRequest, context: TurnContext): Promise<ChatReply> {
    return lastReply(this.streamDecision(actor, request, context, false));
  }

  /** The decided call's result, then the turn: continued when no call of its answer is still open. */
  async *streamDecision(actor: Actor, request: DecisionRequest, context: TurnContext, streaming = true): AsyncGenerator<TurnEvent, void, undefined> {
    requireAccess(actor, ACCESS.agents.write);
    const agent = await this.requireAgent(actor, request.agentId);
    const { session, call, finished, decision, left } = await this.approvals.decide(actor, agent, request, context);
    const { turn, round } = await this.assembly.resume(actor, agent, session, call.messageId, context);
    turn.run.steps.push(approvalStep(call.id, decision.approve, decision.by, decision.at));
    if (decision.approve) turn.run.steps.push(toolStep({ ...call, ...finished }, decision.at, finished.durationMs ?? 0));
    if (!turn.run.stored) await this.store.begin(turn);
    yield { started: { runId: turn.run.id } };
    yield { toolResult: { id: call.id, status: finished.status, result: finished.result ?? null, error: finished.error, errorCode: finished.errorCode } };

    if (left > 0) {
      await this.store.record(turn, 'awaiting_approval');
      yield { completed: replyOf(turn, { id: round.id, content: round.content, model: round.model ?? this.modelName, at: round.createdAt }, 'awaiting_approval') };
      return;
    }
    await this.store.record(turn, 'running');
    yield* this.recorded(turn, this.loop.run(turn, streaming));
  }

  /**
   * The turn's events, its run recorded as failed when they end in an error, or as cancelled when
   * the caller stops reading before the answer (the stream's client went away).
   */
  private async *recorded(turn: Turn, events: AsyncGenerator<TurnEvent, void, undefined>): AsyncGenerator<TurnEvent, void, undefined> {
    let ended = false;
    try {
      for await (const event of events) {
        if ('completed' in event) ended = true;
        yield event;
      }
    } catch (error) {
      ended = true;
      await this.store.fail(turn, error);
      throw error;
    } finally {
      if (!ended) await this.store.fail(turn, undefined, true);
    }
  }

  private async requireAgent(actor: Actor, agentId: string): Promise<AgentRecord> {
    const agent = await this.agents.find(actor.tenantId, agentId);
    if (!agent) throw DomainError.notFound('Agent');
    return agent;
  }
}

async function lastReply(events: AsyncGenerator<TurnEvent, void, undefined>): Promise<ChatReply> {
  let reply: ChatReply | undefined;
  for await (const event of events) if ('completed' in event) reply = event.completed;
  if (!reply) throw new Error('a chat turn ended without its reply');
  return reply;
}
