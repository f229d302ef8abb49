/**
 * The ChatModel port: what the chat service needs from a language model, and nothing of any one
 * provider. Adapters: `OpenAIChatModel` (any OpenAI-compatible server) and `OfflineChatModel`.
 *
 * Failure contract, shared by every adapter:
 * - any provider failure (unreachable, HTTP error answer, time-out, stall mid-stream, an answer that
 *   cannot be understood, no choices) rejects with `DomainError('upstream_error', …, { cause })`;
 * - an abort through `request.signal` stops the upstream request and rejects with the signal's
 *   `reason` (as `fetch` does), not with a DomainError: the client went away, nobody is answered.
 */
import type { ResponseFormat } from './extraction-protocol.js';

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  /** `toolCalls`: the calls this answer asked for (decisions §12); its text may then be empty. */
  | { role: 'assistant'; content: string; toolCalls?: readonly ToolCall[] }
  /** A call's result (or its error), given back to the model under the call's id. */
  | { role: 'tool'; toolCallId: string; content: string };

/** A function the model may call: a JSON Schema object describes its arguments. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A call the model asked for; `arguments` is the JSON text as the model wrote it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatRequest {
  /** The agent's `config.model`; overrides the adapter's default model name. */
  model?: string;
  messages: ChatMessage[];
  /** Functions offered to the model; none offered when absent or empty. */
  tools?: readonly ToolDefinition[];
  /** `none`: the tools stay visible (earlier calls refer to them) but the model must answer in text. */
  toolChoice?: 'auto' | 'none';
  /**
   * The answer must be one JSON document of this schema (memory extraction, decisions §14). An
   * adapter asks the provider to enforce it where the provider can; the caller still checks it.
   */
  responseFormat?: ResponseFormat;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  signal?: AbortSignal;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatCompletion {
  content: string;
  /** The calls the model asked for instead of (or with) its text; empty when it answered. */
  toolCalls: ToolCall[];
  usage: Usage;
  /** The model that answered (the provider's name for it when it gives one). */
  model: string;
}

export interface ChatModel {
  /** The default model name, e.g. 'offline' or LLM_MODEL. */
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatCompletion>;
  /**
   * Yields text pieces; the final completion (with usage and any tool calls, assembled from their
   * streamed fragments) is the generator's return value.
   */
  stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void>;
}
