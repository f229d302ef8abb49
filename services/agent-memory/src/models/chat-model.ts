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

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  /** The agent's `config.model`; overrides the adapter's default model name. */
  model?: string;
  messages: ChatMessage[];
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
  usage: Usage;
  /** The model that answered (the provider's name for it when it gives one). */
  model: string;
}

export interface ChatModel {
  /** The default model name, e.g. 'offline' or LLM_MODEL. */
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatCompletion>;
  /** Yields text pieces; the final completion (with usage) is the generator's return value. */
  stream(request: ChatRequest): AsyncGenerator<string, ChatCompletion, void>;
}
