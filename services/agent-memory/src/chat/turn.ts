// What the parts of a chat turn share: the turn in progress, and what it answers.
import type { Actor, RunTrigger } from '@agent-platform/kit';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { Ranked } from '../memory/hybrid-ranking.js';
import type { MemoryItemView } from '../memory/memory-items.js';
import type { ChatMessage, ChatRequest, Usage } from '../models/chat-model.js';
import type { NewRunStep } from '../runs/run-steps.js';
import type { ToolCaller } from '../tools/kinds/tool-kind.js';
import type { OfferedTool, ToolOutcome } from '../tools/tool-runner.js';
import type { ToolCallStatus } from './chat.entity.js';
import type { NewMessage, NewToolCall } from './chat.repository.js';
import type { ToolCallView } from './context.js';

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
  memories: Ranked<MemoryItemView>[];
  sessionId: string;
  /** The run this turn is (decisions §16). */
  runId: string;
  model: string;
  createdAt: Date;
}

/** What a streamed turn shows, in order: calls and their results, text pieces, then the reply. */
export type TurnEvent =
  /** First, once the turn's run is stored: what every later event of the stream belongs to. */
  | { started: { runId: string } }
  | { delta: string }
  | { toolCall: { id: string; name: string; arguments: string } }
  | { toolResult: { id: string; status: ToolCallStatus; result: unknown; error: string | null; errorCode: string | null } }
  | { completed: ChatReply };

/** What a turn needs of tools: the agent's, as offered to a model, and a way to run one call. */
export interface TurnTools {
  offer(actor: Actor, toolIds: readonly string[]): Promise<OfferedTool[]>;
  run(call: { actor: Actor; offered: OfferedTool; arguments: Record<string, unknown>; signal: AbortSignal; requestId: string | undefined; caller: ToolCaller | undefined }): Promise<ToolOutcome & { durationMs: number }>;
}

/** A turn in progress: what the model sees, what is not stored yet, and what the answer shows. */
export interface Turn {
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
  /** Found when the turn began; a continued turn has those its rounds kept. */
  memories: Ranked<MemoryItemView>[];
  calls: ToolCallView[];
  unsaved: { messages: NewMessage[]; calls: NewToolCall[] };
  run: TurnRun;
}

/** The run a turn is (decisions §16), and its steps not stored yet. */
export interface TurnRun {
  id: string;
  trigger: RunTrigger;
  /** The run of the agent whose tool call began this turn. */
  parentRunId: string | null;
  /** The turn's user message, which a continued turn finds its run by, and its text. */
  messageId: string;
  input: string;
  /** A background run's: its row was stored when it was queued. */
  queued: boolean;
  /** False until its row is stored (a new turn's is, once it has begun). */
  stored: boolean;
  steps: NewRunStep[];
}

/** A model round's answer as the reply shows it. */
export interface Answer {
  id: string;
  content: string;
  model: string;
  at: Date;
}

export function replyOf(turn: Turn, answer: Answer, status: ChatReply['status']): ChatReply {
  const { calls: toolCalls, usage, credits, memories, sessionId } = turn;
  return { id: answer.id, role: 'assistant', content: answer.content, status, toolCalls, usage, credits, memories, sessionId, runId: turn.run.id, model: answer.model, createdAt: answer.at };
}
