import { countTokens, encodeChat } from 'gpt-tokenizer';
import type { ChatMessage, ToolCall, ToolDefinition, Usage } from './chat-model.js';

/**
 * Token counts from a real BPE tokenizer (OpenAI's o200k_base, as gpt-4o and later use), for
 * when a provider reports no usage and for the offline model. Exact for OpenAI's current models;
 * for anything else (Llama, Mistral, Qwen… behind Ollama, vLLM, llama.cpp) it is an estimate:
 * their tokenizers split text differently, so the count credits are charged on is approximate.
 */

/**
 * Text that merely looks like a special token (`<|endoftext|>` typed by a user) is counted as
 * ordinary text: the tokenizer's default would throw on it.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** The chat template whose per-message framing tokens are counted (o200k_base models share it). */
const CHAT_TEMPLATE_MODEL = 'gpt-4o';

export function countTextTokens(text: string): number {
  return countTokens(text, PLAIN_TEXT);
}

/** Tokens of the messages as a chat prompt, framing tokens and the assistant's priming included. */
export function countPromptTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  // The tokenizer's chat template knows three roles: a tool result is input, as a user's text is,
  // and the calls an answer asked for are counted as the JSON the provider would have written.
  const framed = messages.map((message) => {
    if (message.role === 'tool') return { role: 'user' as const, content: message.content };
    if (message.role === 'assistant' && message.toolCalls?.length) return { role: 'assistant' as const, content: message.content + JSON.stringify(message.toolCalls) };
    return { role: message.role, content: message.content };
  });
  const offered = tools.length === 0 ? 0 : countTextTokens(JSON.stringify(tools));
  return encodeChat(framed, CHAT_TEMPLATE_MODEL, PLAIN_TEXT).length + offered;
}

export function estimateUsage(messages: readonly ChatMessage[], completion: string, tools: readonly ToolDefinition[] = [], toolCalls: readonly ToolCall[] = []): Usage {
  const asked = toolCalls.length === 0 ? 0 : countTextTokens(JSON.stringify(toolCalls));
  return usageOf(countPromptTokens(messages, tools), countTextTokens(completion) + asked);
}

/** Two usages added up: a turn's rounds, or extraction's two questions. */
export function sumUsage(a: Usage, b: Usage): Usage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, totalTokens: a.totalTokens + b.totalTokens };
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/**
 * The provider's usage object when it is whole and sane, else undefined (the caller then
 * estimates). Servers differ: some omit `total_tokens`, some send nulls or nothing at all.
 */
export function providerUsage(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const prompt = record['prompt_tokens'];
  const completion = record['completion_tokens'];
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  const total = record['total_tokens'];
  // A total below its parts is a provider bug; the parts are what was actually used.
  return { promptTokens: prompt, completionTokens: completion, totalTokens: isCount(total) && total >= prompt + completion ? total : prompt + completion };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
