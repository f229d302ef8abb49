import { ACCESS, characters, CHAT_MESSAGE_MAX, DECISION_COMMENT_MAX, DomainError, FieldErrors, isId, newId, requireAccess, type Actor, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { extractsMemory } from '../agents/agents.service.js';
import type { ExtractionJob } from '../memory/extraction.repository.js';
import { checkUserId } from '../memory/memory-input.js';
import type { MemoryService } from '../memory/memory.service.js';
import type { ChatCompletion, ChatMessage, ChatModel, ChatRequest, ToolCall, Usage } from '../models/chat-model.js';
import { sumUsage } from '../models/usage.js';
import { systemMessage } from '../models/prompt.js';
import { requireToolAccess } from '../tools/tool-access.js';
import type { OfferedTool, ToolOutcome } from '../tools/tool-runner.js';
import { type ChatMessageRow, type ChatSession, type ToolCallRow, type ToolCallStatus, type UsedMemory } from './chat.entity.js';
import type { ChatRepository, FinishedCall, NewMessage, NewToolCall } from './chat.repository.js';
import { contextOf, outcomeText, toolCallView, type ToolCallView } from './context.js';
import { chargeServed, turnCost, type Credits } from './credits.js';
import type { Ranked } from '../memory/hybrid-ranking.js';

/** decisions §12: the default of an agent's `config.max_tool_rounds`. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;
/** Memories weaker than this are noise in a prompt, not context. */
const CONTEXT_MIN_SCORE = 0.1;
/**
 * An approved call still running this long after its decision ran on a replica that stopped: it
 * is closed as failed (it may or may not have had its effect) so the session can go on.
 */
const INTERRUPTED_GRACE_MS = 60_000;

export interface ChatTurnRequest {
  agentId: string;
  message: string;
  sessionId: string | undefined;
  /** The end user of the tenant's application (decisions §14); a later turn defaults to the session's. */
  userId: string | undefined;
}

export interface DecisionRequest {
  agentId: string;
  sessionId: string;
  callId: string;
  approve: boolean;
  comment: string | undefined;
}

export interface TurnContext {
  signal: AbortSignal;
  requestId: string | undefined;
}

/** The answer of a turn: the chat message (docs/api.md, Chat) plus session_id, model, status and tool calls. */
export interface ChatReply {
  id: string;
  role: 'assistant';
  content: string;
  /** `awaiting_approval`: the turn stopped at calls that need a person's decision. */
  status: 'completed' | 'awaiting_approval';
  /** Every call of the turn so far, in the order the model asked for them. */
  toolCalls: ToolCallView[];
  /** The whole turn's, every model round summed. */
  usage: Usage;
  /** The turn's charge so far: each model round's (decisions §9), summed. */
  credits: number;
  /** The memories put in the turn's context, most relevant first. */
  memories: Ranked[];
  sessionId: string;
  model: string;
  createdAt: Date;
}

/** What a streamed turn shows, in order: calls and their results, text pieces, then the reply. */
export type TurnEvent =
  | { delta: string }
  | { toolCall: { id: string; name: string; arguments: string } }
  | { toolResult: { id: string; status: ToolCallStatus; result: unknown; error: string | null; errorCode: string | null } }
  | { completed: ChatReply };

/** What a turn needs of tools: the agent's, as offered to a model, and a way to run one call. */
export interface TurnTools {
  offer(actor: Actor, toolIds: readonly string[]): Promise<OfferedTool[]>;
  run(call: { actor: Actor; offered: OfferedTool; arguments: Record<string, unknown>; signal: AbortSignal; requestId: string | undefined }): Promise<ToolOutcome & { durationMs: number }>;
}

export interface ChatServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  chat: ChatRepository;
  memory: MemoryService;
  model: ChatModel;
  credits: Credits;
  tools: TurnTools;
  /** TOOL_TIMEOUT_MS: with a grace, how long an approved call may run before it counts as interrupted. */
  toolTimeoutMs: number;
  /** Earlier messages of the session in the context. */
  historyMessages: number;
  /** Memories of the agent in the context. */
  memoryResults: number;
  /** Where a finished turn of an agent that extracts memory is queued (in the turn's transaction), and who is told after. */
  extraction: { enqueue(job: ExtractionJob, now: Date): Promise<void>; queued(): void };
  logger: Logger;
}

/** A turn in progress: what the model sees, what is not stored yet, and what the answer shows. */
interface Turn {
  actor: Actor;
  agent: AgentRecord;
  sessionId: string;
  isNewSession: boolean;
  /** The end user the session is a conversation with; null: none named. */
  userId: string | null;
  context: TurnContext;
  startedAt: Date;
  /** Set until the user's message is stored (and its event recorded with it). */
  userMessage: { id: string; content: string } | undefined;
  messages: ChatMessage[];
  model: Omit<ChatRequest, 'messages' | 'tools' | 'toolChoice' | 'signal'>;
  offered: Map<string, OfferedTool>;
  toolRounds: number;
  maxToolRounds: number;
  usage: Usage;
  credits: number;
  memories: Ranked[];
  calls: ToolCallView[];
  unsaved: { messages: NewMessage[]; calls: NewToolCall[] };
}

/** A call as the model asked for it, resolved against the tools offered. */
interface ResolvedCall {
  row: NewToolCall;
  offered: OfferedTool | undefined;
  arguments: Record<string, unknown> | undefined;
  /** Why it cannot run at all (no such tool, arguments that are not an object). */
  problem: string | undefined;
}

/**
 * A chat turn (decisions §6, §12): checked and charged through identity, its context built from
 * the session's history (episodic memory) and the agent's most relevant memories, answered by the
 * model, which may call the agent's tools for up to `max_tool_rounds` rounds. A turn is stored
 * whole or not at all, its events with it; one that stops for an approval is stored up to there,
 * and the decision continues it.
 */
export class ChatService {
  private readonly options: ChatServiceOptions;

  constructor(options: ChatServiceOptions) {
    this.options = options;
  }

  /** The reply once the turn is done (or waits for an approval). */
  async chat(actor: Actor, request: ChatTurnRequest, context: TurnContext): Promise<ChatReply> {
    return lastReply(this.stream(actor, request, context, false));
  }

  /** The turn's events as they happen; with `streaming`, the model's text comes in pieces. */
  async *stream(actor: Actor, request: ChatTurnRequest, context: TurnContext, streaming = true): AsyncGenerator<TurnEvent, void, undefined> {
    const turn = await this.begin(actor, request, context);
    yield* this.run(turn, streaming);
  }

  /** Approves or rejects a call that awaits it, then continues the turn as a chat call would. */
  async decide(actor: Actor, request: DecisionRequest, context: TurnContext): Promise<ChatReply> {
    return lastReply(this.streamDecision(actor, request, context, false));
  }

  /**
   * Exactly one decision wins a call (a conditional update); the others are 409. The winner runs
   * an approved call and stores its result; of the calls of one answer, the last to finish
   * continues the turn (see ChatRepository.finish), on whichever replica that is.
   */
  async *streamDecision(actor: Actor, request: DecisionRequest, context: TurnContext, streaming = true): AsyncGenerator<TurnEvent, void, undefined> {
    requireAccess(actor, ACCESS.agents.write);
    const { chat, em, credits } = this.options;
    const agent = await this.requireAgent(actor, request.agentId);
    const session = isId('session', request.sessionId) ? await chat.findSession(actor.tenantId, agent.id, request.sessionId) : null;
    if (!session) throw DomainError.notFound('Session');
    const call = isId('toolCall', request.callId) ? await chat.findCall(actor.tenantId, session.id, request.callId) : null;
    if (!call) throw DomainError.notFound('Tool call');
    const comment = request.comment?.trim() || null;
    if (comment !== null && comment.length > DECISION_COMMENT_MAX) throw DomainError.validation([{ field: 'comment', message: `must be at most ${characters(DECISION_COMMENT_MAX)} characters` }]);
    if (call.status !== 'awaiting_approval') throw alreadyDecided();
    const offered = request.approve ? (await this.options.tools.offer(actor, agent.tools)).find((tool) => tool.name === call.name) : undefined;
    // decisions §12: the approver's credential runs the call, so it must be one that could run it;
    // refused here, the call still awaits a decision by someone who may.
    if (offered) requireToolAccess(actor, offered.tool.type);
    // The continuation asks the model again: an empty balance is refused before anything is decided.
    if (request.approve) await credits.ensureAvailable(actor, context.requestId);

    const decision = { approve: request.approve, by: actor.userId, at: new Date(), comment };
    let left: number | null;
    let finished: FinishedCall;
    if (request.approve) {
      const decided = await em.transactional(() => chat.decide(actor.tenantId, session.id, call.id, decision));
      if (!decided) throw alreadyDecided();
      const outcome = offered
        ? await this.options.tools.run({ actor, offered, arguments: decided.arguments as Record<string, unknown>, signal: context.signal, requestId: context.requestId })
        : { status: 'failed' as const, error: `the tool "${decided.name}" is no longer one of the agent's tools`, durationMs: 0 };
      finished = finishedCall(
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
        const rejected = finishedCall(decided, { status: 'rejected', result: undefined, error, errorCode: null }, null);
        return { left: await chat.finish(decided, agent.id, rejected), finished: rejected };
      }));
    }
    // The agent or the session was deleted while the call ran.
    if (left === null) throw DomainError.notFound('Session');
    yield { toolResult: { id: call.id, status: finished.status, result: finished.result ?? null, error: finished.error, errorCode: finished.errorCode } };

    const { turn, round } = await this.resume(actor, agent, session, call.messageId, context);
    if (left > 0) {
      yield { completed: this.reply(turn, { id: round.id, content: round.content, model: round.model ?? this.options.model.name, at: round.createdAt }, 'awaiting_approval') };
      return;
    }
    yield* this.run(turn, streaming);
  }

  private async begin(actor: Actor, request: ChatTurnRequest, context: TurnContext): Promise<Turn> {
    requireAccess(actor, ACCESS.agents.write);
    const { chat, credits, historyMessages } = this.options;
    const agent = await this.requireAgent(actor, request.agentId);
    const errors = new FieldErrors();
    if (request.message.trim().length === 0 || request.message.length > CHAT_MESSAGE_MAX) {
      errors.add('message', `must be 1 to ${characters(CHAT_MESSAGE_MAX)} characters, not blank`);
    }
    let userId = checkUserId(request.userId, errors) ?? null;
    errors.throwIfAny();

    let history: ChatMessage[] = [];
    if (request.sessionId !== undefined) {
      const session = isId('session', request.sessionId) ? await chat.findSession(actor.tenantId, agent.id, request.sessionId) : null;
      if (!session) throw DomainError.notFound('Session');
      // A session's history is one end user's conversation: another user's turn must not see it.
      if (request.userId !== undefined && request.userId !== session.userId) {
        throw DomainError.validation([{ field: 'user_id', message: session.userId === null ? 'the session names no end user; start a new session for one' : 'the session is a conversation with another end user' }]);
      }
      userId = session.userId;
      await this.requireNoOpenCalls(actor, agent, session);
      const rows = await chat.recentMessages(session.id, historyMessages);
      history = contextOf(rows, await chat.callsOf(assistantIds(rows)));
    }
    // Checked before any model call: an empty balance costs the provider nothing.
    await credits.ensureAvailable(actor, context.requestId);
    const startedAt = new Date();
    const turn = await this.newTurn(actor, agent, { id: request.sessionId ?? newId('session'), isNew: request.sessionId === undefined, userId }, request.message, history, context, startedAt);
    turn.userMessage = { id: newId('message'), content: request.message };
    turn.unsaved.messages.push({ id: turn.userMessage.id, role: 'user', content: request.message, toolCallId: null, round: null, createdAt: startedAt });
    turn.messages.push({ role: 'user', content: request.message });
    return turn;
  }

  /** The context every round of a turn shares, up to (not including) the turn's own messages. */
  private async newTurn(
    actor: Actor,
    agent: AgentRecord,
    session: { id: string; isNew: boolean; userId: string | null },
    userText: string,
    history: ChatMessage[],
    context: TurnContext,
    startedAt: Date,
  ): Promise<Turn> {
    const { memory, memoryResults } = this.options;
    const memories =
      memoryResults > 0 && agent.memoryTypes.length > 0
        ? await memory.retrieve(agent, userText, {
            limit: memoryResults,
            minScore: CONTEXT_MIN_SCORE,
            filter: undefined,
            memoryTypes: agent.memoryTypes,
            // decisions §14: the end user's memories and the shared ones, never another user's.
            audience: { userId: session.userId },
          })
        : [];
    const system = systemMessage(agent.config.system_prompt, memories.map((ranked) => ranked.candidate));
    const offered = await this.options.tools.offer(actor, agent.tools);
    const { model, temperature, max_tokens, top_p, max_tool_rounds } = agent.config;
    return {
      actor,
      agent,
      sessionId: session.id,
      isNewSession: session.isNew,
      userId: session.userId,
      context,
      startedAt,
      userMessage: undefined,
      messages: [...(system ? [system] : []), ...history],
      model: {
        ...(model === undefined ? {} : { model }),
        ...(temperature === undefined ? {} : { temperature }),
        ...(max_tokens === undefined ? {} : { maxTokens: max_tokens }),
        ...(top_p === undefined ? {} : { topP: top_p }),
      },
      offered: new Map(offered.map((tool) => [tool.name, tool])),
      toolRounds: 0,
      maxToolRounds: max_tool_rounds ?? DEFAULT_MAX_TOOL_ROUNDS,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      credits: 0,
      memories,
      calls: [],
      unsaved: { messages: [], calls: [] },
    };
  }

  /**
   * Model rounds until the model answers in text, or the turn stops at calls that need approval.
   * The last allowed round offers the tools with `toolChoice: none`: the model must answer then.
   */
  private async *run(turn: Turn, streaming: boolean): AsyncGenerator<TurnEvent, void, undefined> {
    const tools = [...turn.offered.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
    for (;;) {
      const lastRound = turn.toolRounds >= turn.maxToolRounds;
      const request: ChatRequest = {
        ...turn.model,
        messages: turn.messages,
        ...(tools.length > 0 ? { tools, toolChoice: lastRound ? 'none' : 'auto' } : {}),
        signal: turn.context.signal,
      };
      const completion = streaming ? yield* this.streamRound(request) : await this.options.model.complete(request);
      const at = new Date();
      const messageId = newId('message');
      turn.usage = sumUsage(turn.usage, completion.usage);
      const round = roundOf(completion, turn.memories);
      turn.credits += round.credits;
      const assistant: NewMessage = { id: messageId, role: 'assistant', content: completion.content, toolCallId: null, round, createdAt: at };
      turn.unsaved.messages.push(assistant);
      const answer = { id: messageId, content: completion.content, model: completion.model, at };

      if (completion.toolCalls.length === 0 || lastRound) {
        yield { completed: await this.store(turn, answer, 'completed', []) };
        return;
      }

      turn.toolRounds += 1;
      const calls = completion.toolCalls.map((asked, position) => this.resolve(turn, asked, position, messageId, at));
      turn.messages.push({
        role: 'assistant',
        content: completion.content,
        toolCalls: calls.map((call, index) => ({ id: call.row.id, name: call.row.name, arguments: completion.toolCalls[index]!.arguments })),
      });
      for (const [index, call] of calls.entries()) yield { toolCall: { id: call.row.id, name: call.row.name, arguments: completion.toolCalls[index]!.arguments } };

      const waiting = calls.filter((call) => call.problem === undefined && call.offered?.tool.requiresApproval === true);
      const runnable = calls.filter((call) => !waiting.includes(call));
      const outcomes = await Promise.all(runnable.map((call) => this.execute(turn, call)));
      for (const [index, call] of runnable.entries()) {
        const outcome = outcomes[index]!;
        Object.assign(call.row, {
          status: outcome.status,
          result: outcome.status === 'completed' ? outcome.result : null,
          error: outcome.status === 'failed' ? outcome.error : null,
          errorCode: outcome.status === 'failed' ? (outcome.code ?? null) : null,
          durationMs: outcome.durationMs,
          finishedAt: new Date(),
        });
        const content = outcomeText(call.row);
        turn.messages.push({ role: 'tool', toolCallId: call.row.id, content });
        turn.unsaved.messages.push({ id: newId('message'), role: 'tool', content, toolCallId: call.row.id, round: null, createdAt: call.row.finishedAt ?? at });
        yield { toolResult: { id: call.row.id, status: call.row.status, result: call.row.result, error: call.row.error, errorCode: call.row.errorCode } };
      }
      for (const call of waiting) call.row.status = 'awaiting_approval';
      turn.unsaved.calls.push(...calls.map((call) => call.row));
      turn.calls.push(...calls.map((call) => toolCallView({ ...call.row, decidedBy: null, decidedAt: null, decisionComment: null })));

      if (waiting.length > 0) {
        yield { completed: await this.store(turn, answer, 'awaiting_approval', waiting.map((call) => call.row)) };
        return;
      }
    }
  }

  /** One streamed model round: its text pieces go out as they come. */
  private async *streamRound(request: ChatRequest): AsyncGenerator<TurnEvent, ChatCompletion, undefined> {
    const pieces = this.options.model.stream(request);
    let next = await pieces.next();
    while (!next.done) {
      yield { delta: next.value };
      next = await pieces.next();
    }
    return next.value;
  }

  private resolve(turn: Turn, asked: ToolCall, position: number, messageId: string, at: Date): ResolvedCall {
    const offered = turn.offered.get(asked.name);
    let parsed: unknown;
    try {
      parsed = JSON.parse(asked.arguments === '' ? '{}' : asked.arguments);
    } catch {
      parsed = undefined;
    }
    const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
    const problem = !offered
      ? `no tool named "${asked.name}" is offered to this agent`
      : !isObject
        ? 'the arguments are not a JSON object'
        : undefined;
    return {
      row: {
        id: newId('toolCall'),
        tenantId: turn.actor.tenantId,
        sessionId: turn.sessionId,
        messageId,
        position,
        toolId: offered?.tool.id ?? null,
        name: asked.name,
        // What the model wrote is kept even when it is not an object: it is what went wrong.
        arguments: isObject ? parsed : asked.arguments,
        status: 'failed',
        result: null,
        error: problem ?? null,
        errorCode: null,
        durationMs: problem === undefined ? null : 0,
        createdAt: at,
        finishedAt: problem === undefined ? null : at,
      },
      offered,
      arguments: isObject ? (parsed as Record<string, unknown>) : undefined,
      problem,
    };
  }

  private async execute(turn: Turn, call: ResolvedCall): Promise<ToolOutcome & { durationMs: number }> {
    if (call.problem !== undefined || !call.offered || !call.arguments) return { status: 'failed', error: call.problem ?? 'not runnable', durationMs: 0 };
    return this.options.tools.run({ actor: turn.actor, offered: call.offered, arguments: call.arguments, signal: turn.context.signal, requestId: turn.context.requestId });
  }

  /**
   * Writes what the turn has not stored yet, with its events, in one transaction; then charges
   * each model round it stored (idempotently on the round's message id).
   */
  private async store(turn: Turn, answer: { id: string; content: string; model: string; at: Date }, status: ChatReply['status'], waiting: readonly NewToolCall[]): Promise<ChatReply> {
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
    return this.reply(turn, answer, status);
  }

  private reply(turn: Turn, answer: { id: string; content: string; model: string; at: Date }, status: ChatReply['status']): ChatReply {
    const { calls: toolCalls, usage, credits, memories, sessionId } = turn;
    return { id: answer.id, role: 'assistant', content: answer.content, status, toolCalls, usage, credits, memories, sessionId, model: answer.model, createdAt: answer.at };
  }

  /**
   * The turn that `roundId` (an answer that asked for calls) belongs to, rebuilt from storage: the
   * history before its user message, then its own messages, every round counted and summed.
   */
  private async resume(actor: Actor, agent: AgentRecord, session: ChatSession, roundId: string, context: TurnContext): Promise<{ turn: Turn; round: ChatMessageRow }> {
    const { chat, historyMessages } = this.options;
    const rows = await chat.turnOf(session.id, roundId, historyMessages);
    if (!rows) throw DomainError.notFound('Session');
    const { before, own } = rows;
    const user = own[0]!;
    const round = own.find((row) => row.id === roundId)!;
    const calls = await chat.callsOf(assistantIds([...before, ...own]));
    const turn = await this.newTurn(actor, agent, { id: session.id, isNew: false, userId: session.userId }, user.content, contextOf(before, calls), context, user.createdAt);
    turn.messages.push(...contextOf(own, calls));
    const ownIds = new Set(assistantIds(own));
    turn.calls = calls.filter((call) => ownIds.has(call.messageId)).map(toolCallView);
    turn.toolRounds = new Set(turn.calls.map((call) => call.messageId)).size;
    for (const row of own) {
      if (row.role === 'assistant' && row.totalTokens !== null) {
        turn.usage = sumUsage(turn.usage, { promptTokens: row.promptTokens ?? 0, completionTokens: row.completionTokens ?? 0, totalTokens: row.totalTokens });
        turn.credits += row.credits ?? 0;
      }
    }
    return { turn, round };
  }

  /**
   * A session takes no new message while a call in it waits for a decision or runs after one.
   * A call decided long ago and still running ran on a replica that stopped: it is closed as
   * failed, in doubt, rather than run again or left to block the session.
   */
  private async requireNoOpenCalls(actor: Actor, agent: AgentRecord, session: ChatSession): Promise<void> {
    const { chat, em, toolTimeoutMs } = this.options;
    const open = await chat.openCalls(actor.tenantId, session.id);
    if (open.some((call) => call.status === 'awaiting_approval')) {
      throw new DomainError('conflict', 'A tool call in this session awaits approval: approve or reject it before sending a new message.');
    }
    const now = Date.now();
    for (const call of open) {
      if ((call.decidedAt?.getTime() ?? now) + toolTimeoutMs + INTERRUPTED_GRACE_MS > now) {
        throw new DomainError('conflict', 'An approved tool call in this session is still running: wait for its turn to finish.');
      }
      const interrupted = finishedCall(call, { status: 'failed', result: undefined, error: 'interrupted: the replica running it stopped; it may or may not have had its effect', errorCode: null }, null);
      await em.transactional(() => chat.finish(call, agent.id, interrupted));
    }
  }

  private async requireAgent(actor: Actor, agentId: string): Promise<AgentRecord> {
    const agent = await this.options.agents.find(actor.tenantId, agentId);
    if (!agent) throw DomainError.notFound('Agent');
    return agent;
  }

  /**
   * The reply is stored and answered whatever happens here (chargeServed never throws).
   */
  private async charge(turn: Turn, messageId: string, amount: number): Promise<void> {
    await chargeServed(this.options.credits, {
      actor: turn.actor,
      charge: { amount, reference: messageId, description: `Chat with agent ${turn.agent.id}` },
      requestId: turn.context.requestId,
      markCharged: () => this.options.chat.markCharged(messageId, new Date()),
      log: this.options.logger,
      what: 'chat turn',
    });
  }
}

/** The call's end and the `tool` message that hands it to the model. */
function finishedCall(call: ToolCallRow, outcome: Pick<FinishedCall, 'status' | 'result' | 'error' | 'errorCode'>, durationMs: number | null): FinishedCall {
  const finishedAt = new Date();
  const content = outcomeText(outcome);
  return { ...outcome, durationMs, finishedAt, message: { id: newId('message'), role: 'tool', content, toolCallId: call.id, round: null, createdAt: finishedAt } };
}

function alreadyDecided(): DomainError {
  return new DomainError('conflict', 'This tool call was already approved or rejected.');
}

function assistantIds(rows: readonly ChatMessageRow[]): string[] {
  return rows.filter((row) => row.role === 'assistant').map((row) => row.id);
}

function roundOf(completion: ChatCompletion, memories: readonly Ranked[]): NonNullable<NewMessage['round']> {
  return { ...completion.usage, model: completion.model, credits: turnCost(completion.usage.totalTokens), memories: memories.map(usedMemory) };
}

function usedMemory({ candidate, score }: Ranked): UsedMemory {
  const { id, memoryType, content, metadata, userId, createdAt, updatedAt } = candidate;
  return { id, memoryType, content, metadata, userId, createdAt: createdAt.toISOString(), updatedAt: updatedAt?.toISOString() ?? null, score };
}


async function lastReply(events: AsyncGenerator<TurnEvent, void, undefined>): Promise<ChatReply> {
  let reply: ChatReply | undefined;
  for await (const event of events) if ('completed' in event) reply = event.completed;
  if (!reply) throw new Error('a chat turn ended without its reply');
  return reply;
}

