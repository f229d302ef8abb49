import { characters, DECISION_COMMENT_MAX, DomainError, isId, newId, type Actor, type Clock } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { AgentRecord } from '../agents/agents.entity.js';
import { requireToolAccess } from '../tools/tool-access.js';
import type { ChatSession, ToolCallRow } from './chat.entity.js';
import type { ChatRepository, FinishedCall } from './chat.repository.js';
import { outcomeText } from './context.js';
import type { Credits } from './credits.js';
import type { TurnContext, TurnTools } from './turn.js';

/**
 * An approved call still running this long after its decision ran on a replica that stopped: it
 * is closed as failed (it may or may not have had its effect) so the session can go on.
 */
export const INTERRUPTED_GRACE_MS = 60_000;

export interface DecisionRequest {
  agentId: string;
  sessionId: string;
  callId: string;
  approve: boolean;
  comment: string | undefined;
}

export interface ApprovalsOptions {
  em: EntityManager;
  chat: ChatRepository;
  credits: Credits;
  tools: TurnTools;
  /** TOOL_TIMEOUT_MS: with a grace, how long an approved call may run before it counts as interrupted. */
  toolTimeoutMs: number;
  /** What decisions, finished calls and the interrupted call's grace are timed by. */
  clock: Clock;
}

/** A decided call, ended, and how many calls of its answer are still open (0: continue the turn). */
export interface Decided {
  session: ChatSession;
  call: ToolCallRow;
  finished: FinishedCall;
  /** When the decision was taken, and by whom. */
  decision: { approve: boolean; by: string; at: Date };
  left: number;
}

/** decisions §12: a person approves or rejects a call that needs it; an approved one runs once. */
export class Approvals {
  private readonly options: ApprovalsOptions;

  constructor(options: ApprovalsOptions) {
    this.options = options;
  }

  /**
   * Exactly one decision wins a call (a conditional update); the others are 409. The winner runs
   * an approved call and stores its result; of the calls of one answer, the last to finish
   * continues the turn (see ChatRepository.finish), on whichever replica that is.
   */
  async decide(actor: Actor, agent: AgentRecord, request: DecisionRequest, context: TurnContext, runId: string | undefined): Promise<Decided> {
    const { chat, em, credits, tools, clock } = this.options;
    const session = isId('session', request.sessionId) ? await chat.findSession(actor.tenantId, agent.id, request.sessionId) : null;
    if (!session) throw DomainError.notFound('Session');
    const call = isId('toolCall', request.callId) ? await chat.findCall(actor.tenantId, session.id, request.callId) : null;
    if (!call) throw DomainError.notFound('Tool call');
    const comment = request.comment?.trim() || null;
    if (comment !== null && comment.length > DECISION_COMMENT_MAX) throw DomainError.validation([{ field: 'comment', message: `must be at most ${characters(DECISION_COMMENT_MAX)} characters` }]);
    if (call.status !== 'awaiting_approval') throw alreadyDecided();
    const offered = request.approve ? (await tools.offer(actor, agent.tools)).find((tool) => tool.name === call.name) : undefined;
    // decisions §12: the approver's credential runs the call, so it must be one that could run it;
    // refused here, the call still awaits a decision by someone who may.
    if (offered) requireToolAccess(actor, offered.tool.type);
    // The continuation asks the model again: an empty balance is refused before anything is decided.
    if (request.approve) await credits.ensureAvailable(actor, context.requestId);

    const decision = { approve: request.approve, by: actor.userId, at: new Date(clock.now()), comment };
    let left: number | null;
    let finished: FinishedCall;
    if (request.approve) {
      const decided = await em.transactional(() => chat.decide(actor.tenantId, session.id, call.id, decision));
      if (!decided) throw alreadyDecided();
      const outcome = offered
        ? await tools.run({ actor, offered, arguments: decided.arguments as Record<string, unknown>, signal: context.signal, requestId: context.requestId, caller: runId === undefined ? undefined : { agentId: agent.id, runId } })
        : { status: 'failed' as const, error: `the tool "${decided.name}" is no longer one of the agent's tools`, durationMs: 0 };
      finished = finishedCall(
        clock,
        decided,
        outcome.status === 'completed' ? { status: 'completed', result: outcome.result, error: null, errorCode: null } : { status: 'failed', result: undefined, error: outcome.error, errorCode: outcome.code ?? null },
        outcome.durationMs,
      );
      left = await em.transactional(() => chat.finish(decided, agent.id, finished));
    } else {
      const error = `rejected by ${actor.userId}${comment === null ? '' : `: ${comment}`}`;
      ({ left, finished } = await em.transactional(async () => {
        const decided = await chat.decide(actor.tenantId, session.id, call.id, decision);
        if (!decided) throw alreadyDecided();
        const rejected = finishedCall(clock, decided, { status: 'rejected', result: undefined, error, errorCode: null }, null);
        return { left: await chat.finish(decided, agent.id, rejected), finished: rejected };
      }));
    }
    // The agent or the session was deleted while the call ran.
    if (left === null) throw DomainError.notFound('Session');
    return { session, call, finished, decision, left };
  }

  /**
   * A session takes no new message while a call in it waits for a decision or runs after one.
   * A call decided long ago and still running ran on a replica that stopped: it is closed as
   * failed, in doubt, rather than run again or left to block the session.
   */
  async requireNoOpenCalls(actor: Actor, agent: AgentRecord, session: ChatSession): Promise<void> {
    const { chat, em, toolTimeoutMs, clock } = this.options;
    const open = await chat.openCalls(actor.tenantId, session.id);
    if (open.some((call) => call.status === 'awaiting_approval')) {
      throw new DomainError('conflict', 'A tool call in this session awaits approval: approve or reject it before sending a new message.');
    }
    const now = clock.now();
    for (const call of open) {
      if ((call.decidedAt?.getTime() ?? now) + toolTimeoutMs + INTERRUPTED_GRACE_MS > now) {
        throw new DomainError('conflict', 'An approved tool call in this session is still running: wait for its turn to finish.');
      }
      const interrupted = finishedCall(clock, call, { status: 'failed', result: undefined, error: 'interrupted: the replica running it stopped; it may or may not have had its effect', errorCode: null }, null);
      await em.transactional(() => chat.finish(call, agent.id, interrupted));
    }
  }
}

/** The call's end and the `tool` message that hands it to the model. */
function finishedCall(clock: Clock, call: ToolCallRow, outcome: Pick<FinishedCall, 'status' | 'result' | 'error' | 'errorCode'>, durationMs: number | null): FinishedCall {
  const finishedAt = new Date(clock.now());
  const content = outcomeText(outcome);
  return { ...outcome, durationMs, finishedAt, message: { id: newId('message'), role: 'tool', content, toolCallId: call.id, round: null, createdAt: finishedAt } };
}

function alreadyDecided(): DomainError {
  return new DomainError('conflict', 'This tool call was already approved or rejected.');
}
