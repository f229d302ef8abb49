import { ACCESS, activeTraceId, DomainError, isId, newId, requireAccess, type Actor, type Clock } from '@agent-platform/kit';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { AgentsService } from '../agents/agents.service.js';
import { approvalStep, toolStep } from '../runs/run-steps.js';
import type { Run } from '../runs/runs.entity.js';
import type { ClaimedRun } from '../runs/run-leases.js';
import type { RunsRepository } from '../runs/runs.repository.js';
import type { ToolCaller } from '../tools/kinds/tool-kind.js';
import { Approvals, type ApprovalsOptions, type DecisionRequest } from './approvals.js';
import { ToolLoop, type ToolLoopOptions } from './tool-loop.js';
import { TurnAssembly, type ChatTurnRequest, type TurnAssemblyOptions } from './turn-assembly.js';
import { TurnStore, type TurnStoreOptions } from './turn-store.js';
import { replyOf, type ChatReply, type Turn, type TurnContext, type TurnEvent } from './turn.js';

/** decisions §16: a run begun by an agent tool's call nests at most this deep, the first turn counted. */
export const MAX_AGENT_DEPTH = 3;

export type { DecisionRequest } from './approvals.js';
export type { ChatTurnRequest } from './turn-assembly.js';
export type { ChatReply, TurnContext, TurnEvent, TurnTools } from './turn.js';

/** What every part of a turn needs, given once; each part's options say what it is for. */
export interface ChatServiceOptions extends Omit<TurnAssemblyOptions, 'approvals'>, ApprovalsOptions, Omit<ToolLoopOptions, 'store'>, TurnStoreOptions {
  agents: AgentsRepository;
  /** An agent as it was at a version (decisions §16), for a turn that names one. */
  versions: Pick<AgentsService, 'atVersion'>;
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
  private readonly versions: Pick<AgentsService, 'atVersion'>;
  private readonly runs: RunsRepository;
  private readonly clock: Clock;
  private readonly modelName: string;
  private readonly assembly: TurnAssembly;
  private readonly approvals: Approvals;
  private readonly store: TurnStore;
  private readonly loop: ToolLoop;

  constructor(options: ChatServiceOptions) {
    this.agents = options.agents;
    this.versions = options.versions;
    this.runs = options.runs;
    this.clock = options.clock;
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
    const agent = await this.agentAt(actor, request.agentId, request.agentVersion);
    const turn = await this.assembly.begin(actor, agent, request, context);
    await this.store.begin(turn);
    yield { started: { runId: turn.run.id } };
    yield* this.recorded(turn, this.loop.run(turn, streaming));
  }

  /**
   * decisions §16: a turn that runs in the background. Refused now as a chat turn would be (the
   * message, the session, its open calls, the balance); else queued with the caller as the
   * principal it acts as, for a worker of any replica to run.
   */
  async queue(actor: Actor, request: Omit<ChatTurnRequest, 'trigger' | 'parentRunId'>, context: TurnContext): Promise<Run> {
    requireAccess(actor, ACCESS.agents.write);
    const agent = await this.agentAt(actor, request.agentId, request.agentVersion);
    const turn = { ...request, trigger: 'background' as const, parentRunId: null };
    await this.assembly.check(actor, agent, turn, context);
    const id = newId('run');
    const queued = await this.runs.start(
      {
        id,
        tenantId: actor.tenantId,
        agentId: agent.id,
        agentVersion: agent.version,
        sessionId: request.sessionId ?? null,
        userId: request.userId ?? null,
        trigger: 'background',
        status: 'queued',
        input: request.message,
        parentRunId: null,
        traceId: activeTraceId(),
        messageId: null,
        startedAt: new Date(this.clock.now()),
        actor,
        request: { sessionId: request.sessionId ?? null, userId: request.userId ?? null, agentVersion: request.agentVersion ?? null },
      },
      [],
    );
    if (!queued) throw DomainError.notFound('Agent');
    const run = await this.runs.find(actor.tenantId, id);
    if (!run) throw DomainError.notFound('Run');
    return run;
  }

  /**
   * Runs a background run a worker claimed, as the principal stored with it, to its end: completed,
   * awaiting_approval, or failed with its reason (a refusal met now, say a session deleted since).
   */
  async runQueued(claimed: ClaimedRun, signal: AbortSignal): Promise<void> {
    const actor = claimed.actor;
    const context = { signal, requestId: undefined };
    let turn: Turn;
    try {
      const agent = await this.agentAt(actor, claimed.agentId, claimed.request.agentVersion ?? undefined);
      const request = { agentId: agent.id, message: claimed.input, sessionId: claimed.request.sessionId ?? undefined, userId: claimed.request.userId ?? undefined };
      turn = await this.assembly.begin(actor, agent, { ...request, trigger: claimed.trigger, parentRunId: null, queuedRunId: claimed.id }, context);
      await this.store.begin(turn);
    } catch (error) {
      // Stopping: the lease runs out and a replica takes the run up again.
      if (signal.aborted) throw error;
      await this.store.failQueued(claimed, error);
      return;
    }
    // A failure is recorded on the run by `recorded`; a stop or a cancel leaves it to its lease.
    for await (const event of this.recorded(turn, this.loop.run(turn, false))) void event;
  }

  /**
   * decisions §16: an `agent` tool's call: `message` as a turn of another agent of the tenant, in a
   * session of its own, its run a child of the caller's. Nesting deeper than MAX_AGENT_DEPTH is
   * refused before anything runs.
   */
  async agentTurn(request: { actor: Actor; agentId: string; message: string; caller: ToolCaller; signal: AbortSignal; requestId: string | undefined }): Promise<{ content: string; runId: string; sessionId: string }> {
    if ((await this.runs.depthOf(request.caller.runId)) >= MAX_AGENT_DEPTH) {
      throw new DomainError('conflict', `agents may call agents ${MAX_AGENT_DEPTH} deep at most; this call would go deeper`);
    }
    const turn = { agentId: request.agentId, message: request.message, sessionId: undefined, userId: undefined, trigger: 'agent' as const, parentRunId: request.caller.runId };
    const reply = await this.chat(request.actor, turn, { signal: request.signal, requestId: request.requestId });
    if (reply.status === 'awaiting_approval') return { content: `${reply.content}\n(its turn waits for a person's approval of a tool call)`.trim(), runId: reply.runId, sessionId: reply.sessionId };
    return { content: reply.content, runId: reply.runId, sessionId: reply.sessionId };
  }

  /** Ends a background run that will not run (interrupted too often, or after its tool calls ran). */
  failQueued(claimed: ClaimedRun, error: DomainError): Promise<void> {
    return this.store.failQueued(claimed, error);
  }

  /** Approves or rejects a call that awaits it, then continues the turn as a chat call would. */
  async decide(actor: Actor, request: DecisionRequest, context: TurnContext): Promise<ChatReply> {
    return lastReply(this.streamDecision(actor, request, context, false));
  }

  /** The decided call's result, then the turn: continued when no call of its answer is still open. */
  async *streamDecision(actor: Actor, request: DecisionRequest, context: TurnContext, streaming = true): AsyncGenerator<TurnEvent, void, undefined> {
    requireAccess(actor, ACCESS.agents.write);
    // The turn goes on as the version of the agent it began with: its tools, its prompt.
    const run = isId('session', request.sessionId) && isId('toolCall', request.callId) ? await this.runs.runOfCall(actor.tenantId, request.sessionId, request.callId) : null;
    const agent = await this.agentAt(actor, request.agentId, run?.agentVersion);
    const { session, call, finished, decision, left } = await this.approvals.decide(actor, agent, request, context, run?.id);
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

  /** The agent, as it is or as it was at `version`. */
  /** The agent as it is, or as one of its versions was: what a turn of it runs as. */
  async agentAt(actor: Actor, agentId: string, version?: number): Promise<AgentRecord> {
    if (version !== undefined) return this.versions.atVersion(actor, agentId, version);
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
