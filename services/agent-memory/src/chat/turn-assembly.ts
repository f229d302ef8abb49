import { characters, CHAT_MESSAGE_MAX, DomainError, FieldErrors, isId, newId, type Actor, type Clock, type RunTrigger } from '@agent-platform/kit';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { Ranked } from '../memory/hybrid-ranking.js';
import type { MemoryItemView } from '../memory/memory-items.js';
import { checkUserId } from '../memory/memory-input.js';
import type { MemoryService } from '../memory/memory.service.js';
import type { ChatMessage } from '../models/chat-model.js';
import { systemMessage } from '../models/prompt.js';
import { sumUsage } from '../models/usage.js';
import { retrievalStep } from '../runs/run-steps.js';
import type { RunsRepository } from '../runs/runs.repository.js';
import type { Approvals } from './approvals.js';
import type { ChatMessageRow, ChatSession } from './chat.entity.js';
import type { ChatRepository } from './chat.repository.js';
import { contextOf, keptMemory, toolCallView } from './context.js';
import type { Credits } from './credits.js';
import type { Turn, TurnContext, TurnRun, TurnTools } from './turn.js';

/** decisions §12: the default of an agent's `config.max_tool_rounds`. */
export const DEFAULT_MAX_TOOL_ROUNDS = 8;
/** Memories weaker than this are noise in a prompt, not context. */
const CONTEXT_MIN_SCORE = 0.1;

export interface ChatTurnRequest {
  agentId: string;
  message: string;
  sessionId: string | undefined;
  /** The end user of the tenant's application (decisions §14); a later turn defaults to the session's. */
  userId: string | undefined;
  /** What started the turn (decisions §16). */
  trigger: RunTrigger;
  /** The run of the agent whose tool call sent this message; null for any other turn. */
  parentRunId: string | null;
  /** A background run's, queued before: the turn is that run. */
  queuedRunId?: string;
  /** decisions §16: the version of the agent the turn runs with; absent: the current one. */
  agentVersion?: number | undefined;
}

export interface TurnAssemblyOptions {
  chat: ChatRepository;
  /** Where a continued turn finds the run it belongs to. */
  runs: RunsRepository;
  memory: MemoryService;
  credits: Credits;
  tools: TurnTools;
  /** A session with a call open takes no new message. */
  approvals: Pick<Approvals, 'requireNoOpenCalls'>;
  /** Earlier messages of the session in the context. */
  historyMessages: number;
  /** Memories of the agent in the context. */
  memoryResults: number;
  /** When a turn starts. */
  clock: Clock;
}

/**
 * Builds a turn (decisions §6): its context from the session's history (episodic memory) and the
 * agent's most relevant memories, the agent's tools and model settings; a new turn from a user's
 * message, or one that waited for a decision from what it stored.
 */
export class TurnAssembly {
  private readonly options: TurnAssemblyOptions;

  constructor(options: TurnAssemblyOptions) {
    this.options = options;
  }

  /**
   * Every refusal a new turn may meet (the message, the end user, the session and its open calls,
   * the balance), without beginning it: what a background run is checked with before it is queued.
   */
  async check(actor: Actor, agent: AgentRecord, request: ChatTurnRequest, context: TurnContext): Promise<void> {
    await this.prepare(actor, agent, request, context, 0);
  }

  /** A new turn of `agent` for the user's message, in a new session or one named. */
  async begin(actor: Actor, agent: AgentRecord, request: ChatTurnRequest, context: TurnContext): Promise<Turn> {
    const { clock } = this.options;
    const { userId, history } = await this.prepare(actor, agent, request, context, this.options.historyMessages);
    const startedAt = new Date(clock.now());
    const messageId = newId('message');
    const run: TurnRun = {
      id: request.queuedRunId ?? newId('run'),
      trigger: request.trigger,
      parentRunId: request.parentRunId,
      messageId,
      input: request.message,
      queued: request.queuedRunId !== undefined,
      stored: false,
      steps: [],
    };
    let memories: Ranked<MemoryItemView>[] = [];
    if (this.searches(agent)) {
      memories = await this.retrieve(agent, request.message, userId);
      run.steps.push(retrievalStep(request.message, memories, startedAt, new Date(clock.now())));
    }
    const session = { id: request.sessionId ?? newId('session'), isNew: request.sessionId === undefined, userId };
    const turn = await this.newTurn(actor, agent, session, history, memories, context, startedAt, run);
    turn.userMessage = { id: messageId, content: request.message };
    turn.unsaved.messages.push({ id: turn.userMessage.id, role: 'user', content: request.message, toolCallId: null, round: null, createdAt: startedAt });
    turn.messages.push({ role: 'user', content: request.message });
    return turn;
  }

  /** The checks of a new turn, then the end user it is for and its session's last `historyMessages`. */
  private async prepare(actor: Actor, agent: AgentRecord, request: ChatTurnRequest, context: TurnContext, historyMessages: number): Promise<{ userId: string | null; history: ChatMessage[] }> {
    const { chat, credits } = this.options;
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
      await this.options.approvals.requireNoOpenCalls(actor, agent, session);
      const rows = await chat.recentMessages(session.id, historyMessages);
      history = contextOf(rows, await chat.callsOf(assistantIds(rows)));
    }
    // Checked before any model call: an empty balance costs the provider nothing.
    await credits.ensureAvailable(actor, context.requestId);
    return { userId, history };
  }

  /**
   * The turn that `roundId` (an answer that asked for calls) belongs to, rebuilt from storage: the
   * history before its user message, then its own messages, every round counted and summed. Its
   * memories are those it began with, as its rounds kept them, not a search now: memory may have
   * changed while a call waited. A round stored before they were kept (migration 0010) searches.
   */
  async resume(actor: Actor, agent: AgentRecord, session: ChatSession, roundId: string, context: TurnContext): Promise<{ turn: Turn; round: ChatMessageRow }> {
    const { chat, historyMessages } = this.options;
    const rows = await chat.turnOf(session.id, roundId, historyMessages);
    if (!rows) throw DomainError.notFound('Session');
    const { before, own } = rows;
    const user = own[0]!;
    const round = own.find((row) => row.id === roundId)!;
    const calls = await chat.callsOf(assistantIds([...before, ...own]));
    const memories = round.memories === null ? await this.retrieve(agent, user.content, session.userId) : round.memories.map((kept) => keptMemory(agent.id, kept));
    // A turn stored before runs were kept (migration 0011) gets its run now.
    const stored = await this.options.runs.forMessage(actor.tenantId, user.id);
    const run: TurnRun = stored
      ? { id: stored.id, trigger: stored.trigger, parentRunId: stored.parentRunId, messageId: user.id, input: user.content, queued: false, stored: true, steps: [] }
      : { id: newId('run'), trigger: 'chat', parentRunId: null, messageId: user.id, input: user.content, queued: false, stored: false, steps: [] };
    const turn = await this.newTurn(actor, agent, { id: session.id, isNew: false, userId: session.userId }, contextOf(before, calls), memories, context, user.createdAt, run);
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

  /** The context every round of a turn shares, up to (not including) the turn's own messages. */
  private async newTurn(
    actor: Actor,
    agent: AgentRecord,
    session: { id: string; isNew: boolean; userId: string | null },
    history: ChatMessage[],
    memories: Ranked<MemoryItemView>[],
    context: TurnContext,
    startedAt: Date,
    run: TurnRun,
  ): Promise<Turn> {
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
      run,
    };
  }

  /** The agent's memories most relevant to the user's message, for the end user `userId`. */
  private async retrieve(agent: AgentRecord, userText: string, userId: string | null): Promise<Ranked<MemoryItemView>[]> {
    const { memory, memoryResults } = this.options;
    if (!this.searches(agent)) return [];
    return memory.retrieve(agent, userText, {
      limit: memoryResults,
      minScore: CONTEXT_MIN_SCORE,
      filter: undefined,
      memoryTypes: agent.memoryTypes,
      // decisions §14: the end user's memories and the shared ones, never another user's.
      audience: { userId },
    });
  }

  /** Whether turns of `agent` search its memory: it keeps some, and the context takes some. */
  private searches(agent: AgentRecord): boolean {
    return this.options.memoryResults > 0 && agent.memoryTypes.length > 0;
  }
}

function assistantIds(rows: readonly ChatMessageRow[]): string[] {
  return rows.filter((row) => row.role === 'assistant').map((row) => row.id);
}
