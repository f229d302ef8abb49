import { ACCESS, DomainError, FieldErrors, isId, newId, requireAccess, type Actor, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { MemoryService } from '../memory/memory.service.js';
import type { ChatCompletion, ChatMessage, ChatModel, ChatRequest } from '../models/chat-model.js';
import { systemMessage } from '../models/prompt.js';
import type { ChatRepository } from './chat.repository.js';
import { turnCost, type Credits } from './credits.js';

export const MESSAGE_MAX = 32_000;
/** Memories weaker than this are noise in a prompt, not context. */
const CONTEXT_MIN_SCORE = 0.1;
const CHARGE_ATTEMPTS = 3;
const CHARGE_RETRY_MS = 200;

export interface ChatTurnRequest {
  agentId: string;
  message: string;
  sessionId: string | undefined;
}

/** The reply of a turn: spec §2's chat message plus session_id and model. */
export interface ChatReply {
  id: string;
  role: 'assistant';
  content: string;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  sessionId: string;
  model: string;
  createdAt: Date;
}

export interface ChatServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  chat: ChatRepository;
  memory: MemoryService;
  model: ChatModel;
  credits: Credits;
  /** Earlier messages of the session in the context. */
  historyMessages: number;
  /** Memories of the agent in the context. */
  memoryResults: number;
  logger: Logger;
}

/** Everything a turn needs once it is accepted: checked, with its context assembled. */
interface Turn {
  actor: Actor;
  agent: AgentRecord;
  sessionId: string;
  isNewSession: boolean;
  message: string;
  userMessageId: string;
  replyId: string;
  startedAt: Date;
  request: ChatRequest;
  requestId: string | undefined;
}

/**
 * A chat turn: checked and charged through identity, its context built from the session's
 * history (episodic memory) and the agent's most relevant memories, answered by the model, and
 * stored whole or not at all. Both events of the turn commit with it: a failed turn emits nothing.
 */
export class ChatService {
  private readonly options: ChatServiceOptions;

  constructor(options: ChatServiceOptions) {
    this.options = options;
  }

  async chat(actor: Actor, request: ChatTurnRequest, context: { signal: AbortSignal; requestId: string | undefined }): Promise<ChatReply> {
    const turn = await this.begin(actor, request, context);
    const completion = await this.options.model.complete(turn.request);
    return this.finish(turn, completion);
  }

  /** Text pieces as the model produces them, then the reply once it is stored. */
  async *stream(
    actor: Actor,
    request: ChatTurnRequest,
    context: { signal: AbortSignal; requestId: string | undefined },
  ): AsyncGenerator<{ delta: string } | { completed: ChatReply }, void, undefined> {
    const turn = await this.begin(actor, request, context);
    const pieces = this.options.model.stream(turn.request);
    let next = await pieces.next();
    while (!next.done) {
      yield { delta: next.value };
      next = await pieces.next();
    }
    yield { completed: await this.finish(turn, next.value) };
  }

  private async begin(actor: Actor, request: ChatTurnRequest, context: { signal: AbortSignal; requestId: string | undefined }): Promise<Turn> {
    requireAccess(actor, ACCESS.agents.write);
    const { agents, chat, credits, memory, historyMessages, memoryResults } = this.options;
    const agent = await agents.find(actor.tenantId, request.agentId);
    if (!agent) throw DomainError.notFound('Agent');
    const errors = new FieldErrors();
    if (request.message.trim().length === 0 || request.message.length > MESSAGE_MAX) {
      errors.add('message', `must be 1 to ${MESSAGE_MAX.toLocaleString('en')} characters, not blank`);
    }
    errors.throwIfAny();

    let history: ChatMessage[] = [];
    if (request.sessionId !== undefined) {
      const session = isId('session', request.sessionId) ? await chat.findSession(actor.tenantId, agent.id, request.sessionId) : null;
      if (!session) throw DomainError.notFound('Session');
      history = (await chat.recentMessages(session.id, historyMessages)).map((row) => ({ role: row.role, content: row.content }));
    }
    // Checked before any model call: an empty balance costs the provider nothing.
    await credits.ensureAvailable(actor, context.requestId);

    const memories =
      memoryResults > 0 && agent.memoryTypes.length > 0
        ? await memory.retrieve(agent, request.message, { limit: memoryResults, minScore: CONTEXT_MIN_SCORE, filter: undefined, memoryTypes: agent.memoryTypes })
        : [];
    const system = systemMessage(agent.config.system_prompt, memories.map((ranked) => ranked.candidate));
    const { model, temperature, max_tokens, top_p } = agent.config;
    return {
      actor,
      agent,
      sessionId: request.sessionId ?? newId('session'),
      isNewSession: request.sessionId === undefined,
      message: request.message,
      userMessageId: newId('message'),
      replyId: newId('message'),
      startedAt: new Date(),
      requestId: context.requestId,
      request: {
        ...(model === undefined ? {} : { model }),
        messages: [...(system ? [system] : []), ...history, { role: 'user', content: request.message }],
        ...(temperature === undefined ? {} : { temperature }),
        ...(max_tokens === undefined ? {} : { maxTokens: max_tokens }),
        ...(top_p === undefined ? {} : { topP: top_p }),
        signal: context.signal,
      },
    };
  }

  /** Stores the turn and its events in one transaction, then charges it (idempotently on the reply's id). */
  private async finish(turn: Turn, completion: ChatCompletion): Promise<ChatReply> {
    const { em, chat } = this.options;
    const finishedAt = new Date();
    const credits = turnCost(completion.usage.totalTokens);
    const tenantId = turn.actor.tenantId;
    const data = { agent_id: turn.agent.id, conversation_id: turn.sessionId };
    await em.transactional(async (tx) => {
      const stored = await chat.storeTurn({
        sessionId: turn.sessionId,
        isNewSession: turn.isNewSession,
        tenantId,
        agentId: turn.agent.id,
        user: { id: turn.userMessageId, content: turn.message, createdAt: turn.startedAt },
        reply: { id: turn.replyId, content: completion.content, ...completion.usage, model: completion.model, credits, createdAt: finishedAt },
      });
      if (!stored) throw DomainError.notFound(turn.isNewSession ? 'Agent' : 'Session');
      await recordEvent(tx, newEvent('agent.message.created', tenantId, { ...data, message_id: turn.userMessageId, role: 'user', content: turn.message }, turn.startedAt));
      await recordEvent(
        tx,
        newEvent(
          'agent.message.completed',
          tenantId,
          { ...data, message_id: turn.replyId, content: completion.content, tokens_used: completion.usage.totalTokens, latency_ms: finishedAt.getTime() - turn.startedAt.getTime() },
          finishedAt,
        ),
      );
    });
    await this.charge(turn, credits);
    return { id: turn.replyId, role: 'assistant', content: completion.content, usage: completion.usage, sessionId: turn.sessionId, model: completion.model, createdAt: finishedAt };
  }

  /**
   * The reply is stored and answered whatever happens here: a charge that keeps failing is logged
   * and left uncharged (charged_at null) rather than taking back a turn the user already has.
   */
  private async charge(turn: Turn, amount: number): Promise<void> {
    const charge = { amount, reference: turn.replyId, description: `Chat with agent ${turn.agent.id}` };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.options.credits.charge(turn.actor, charge, turn.requestId);
        await this.options.chat.markCharged(turn.replyId, new Date());
        return;
      } catch (error) {
        if (attempt >= CHARGE_ATTEMPTS) {
          this.options.logger.error({ err: error, message_id: turn.replyId, credits: amount }, 'chat turn could not be charged; it stays uncharged');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, CHARGE_RETRY_MS * attempt));
      }
    }
  }
}
