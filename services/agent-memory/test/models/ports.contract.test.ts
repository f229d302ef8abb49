import { DomainError } from '@agent-platform/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatModel } from '../../src/models/chat-model.js';
import type { Embedder } from '../../src/models/embedder.js';
import { HashingEmbedder } from '../../src/models/hashing-embedder.js';
import { HybridEmbedder } from '../../src/models/hybrid-embedder.js';
import { OfflineChatModel } from '../../src/models/offline-chat-model.js';
import { OpenAIChatModel } from '../../src/models/openai-chat-model.js';
import { ObservedChatModel } from '../../src/models/observed-chat-model.js';
import { OpenAIEmbedder } from '../../src/models/openai-embedder.js';
import { systemMessage } from '../../src/models/prompt.js';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.js';

// The same contract for every adapter of a port: the chat service must not care which it got.

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});

const chatModels: [string, () => ChatModel][] = [
  ['offline', () => new OfflineChatModel()],
  ['openai-compatible', () => new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'k', model: 'contract-model', timeoutMs: 2_000 })],
  // The traced decorator every service instance uses must keep the contract of what it wraps.
  [
    'observed openai-compatible',
    () => new ObservedChatModel(new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'k', model: 'contract-model', timeoutMs: 2_000 }), { name: 'openai' }),
  ],
];

describe.each(chatModels)('ChatModel contract: %s', (_name, create) => {
  const messages = [systemMessage('Be kind.', [{ content: 'The user likes tea.' }]) ?? { role: 'system' as const, content: '' }, { role: 'user' as const, content: 'What do I like?' }];

  it('completes with content, the answering model and consistent whole-number usage', async () => {
    const completion = await create().complete({ messages });
    expect(completion.content.length).toBeGreaterThan(0);
    expect(completion.model.length).toBeGreaterThan(0);
    const { promptTokens, completionTokens, totalTokens } = completion.usage;
    for (const count of [promptTokens, completionTokens, totalTokens]) expect(Number.isSafeInteger(count) && count > 0).toBe(true);
    expect(totalTokens).toBe(promptTokens + completionTokens);
  });

  it('streams pieces that join into the content it returns, the same content complete() gives', async () => {
    const model = create();
    const stream = model.stream({ messages });
    const pieces: string[] = [];
    let next = await stream.next();
    while (!next.done) {
      pieces.push(next.value);
      next = await stream.next();
    }
    expect(pieces.join('')).toBe(next.value.content);
    expect(next.value.content).toBe((await model.complete({ messages })).content);
  });

  it('rejects with the abort reason, not a DomainError, when the caller has gone', async () => {
    const reason = new Error('client went away');
    const rejection = await create().complete({ messages, signal: AbortSignal.abort(reason) }).catch((error: unknown) => error);
    expect(rejection).toBe(reason);
    expect(rejection).not.toBeInstanceOf(DomainError);
  });
});

const embedders: [string, () => Embedder][] = [
  ['hashing', () => new HashingEmbedder()],
  ['hybrid', () => new HybridEmbedder()],
  ['openai-compatible', () => new OpenAIEmbedder({ baseURL: fake.baseURL, apiKey: 'k', model: 'contract-embed', dimensions: 12, requestDimensions: true, timeoutMs: 2_000 })],
];

describe.each(embedders)('Embedder contract: %s', (_name, create) => {
  const texts = ['Tea is preferred.', 'Order ord_1234 shipped.', 'Order ord_1234 shipped.'];

  it('returns one finite unit vector of the advertised dimension per text', async () => {
    const embedder = create();
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) {
      expect(vector).toHaveLength(embedder.dimensions);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    }
    expect(Array.from(vectors[2] ?? [])).toEqual(Array.from(vectors[1] ?? []));
  });

  it('answers no texts with no vectors', async () => {
    await expect(create().embed([])).resolves.toEqual([]);
  });

  it('rejects with the abort reason when the caller has gone', async () => {
    const reason = new Error('gone');
    await expect(create().embed(texts, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it("lets the process's other work run while it embeds a document's many chunks", async () => {
    // Enough to take longer than one slice (EMBED_SLICE_MS) on a machine several times this one's speed.
    const chunks = Array.from({ length: 5_000 }, (_, index) => `Chunk ${index}: refunds for order ord_${index} are handled within ${index % 30} days.`);
    const embedding = create().embed(chunks);
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    expect(await embedding).toHaveLength(chunks.length);
    expect(otherWorkRan).toBe(true);
  });
});
