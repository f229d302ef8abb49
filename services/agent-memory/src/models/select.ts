import type { AgentMemoryConfig } from '../config.js';
import type { ChatModel } from './chat-model.js';
import type { Embedder } from './embedder.js';
import { HybridEmbedder } from './hybrid-embedder.js';
import { OfflineChatModel } from './offline-chat-model.js';
import { OpenAIChatModel } from './openai-chat-model.js';
import { ObservedChatModel } from './observed-chat-model.js';
import { OpenAIEmbedder } from './openai-embedder.js';

/** decisions §6: an OpenAI-compatible server when LLM_* is set, else the built-in offline model. */
export function chatModelFrom(config: AgentMemoryConfig): ChatModel {
  if (!config.llm) return new ObservedChatModel(new OfflineChatModel(), { name: 'offline' });
  const model = new OpenAIChatModel({
    baseURL: config.llm.baseUrl,
    ...(config.llm.apiKey === undefined ? {} : { apiKey: config.llm.apiKey }),
    model: config.llm.model,
    maxTokensField: config.llm.maxTokensField,
    timeoutMs: config.llmTimeoutMs,
  });
  return new ObservedChatModel(model, { name: 'openai', address: URL.parse(config.llm.baseUrl)?.hostname });
}

/**
 * An OpenAI-compatible embeddings server when EMBEDDING_* is set, else the built-in hybrid
 * embedder (lexical hashing beside word vectors). `HashingEmbedder` stays for what stored vectors
 * of its model or a test may want; items of any model but the chosen one are re-embedded in the
 * background (memory/reembedding.ts).
 */
export function embedderFrom(config: AgentMemoryConfig): Embedder {
  if (!config.embedding) return new HybridEmbedder();
  return new OpenAIEmbedder({
    baseURL: config.embedding.baseUrl,
    ...(config.embedding.apiKey === undefined ? {} : { apiKey: config.embedding.apiKey }),
    model: config.embedding.model,
    dimensions: config.embedding.dimensions,
    timeoutMs: config.llmTimeoutMs,
  });
}
