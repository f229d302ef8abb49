import { ManualClock } from '@agent-platform/kit/testing';
import { expectError } from '@agent-platform/kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatCompletion, ChatMessage } from '../../src/models/chat-model.js';
import { OpenAIChatModel } from '../../src/models/openai-chat-model.js';
import { estimateUsage } from '../../src/models/usage.js';
import { refusedBaseURL, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.js';

const TIMEOUT_MS = 300;
const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me about the weather in Lisbon today' }];

let fake: FakeOpenAI;
let model: OpenAIChatModel;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  model = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'sk-test-key', model: 'default-model', timeoutMs: TIMEOUT_MS });
});

afterEach(async () => {
  await fake.close();
});

/** Every piece, then the generator's return value. */
async function drain(stream: AsyncGenerator<string, ChatCompletion, void>, onPiece?: () => Promise<void>): Promise<{ pieces: string[]; completion: ChatCompletion }> {
  const pieces: string[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return { pieces, completion: next.value };
    pieces.push(next.value);
    await onPiece?.();
  }
}

describe('OpenAIChatModel.stream', () => {
  it('yields pieces that make up the final content, with the usage the provider reports', async () => {
    const content = 'It is sunny and 24 degrees in Lisbon.';
    fake.chat({ kind: 'answer', content, model: 'gpt-4o-mini-2024-07-18' });
    const { pieces, completion } = await drain(model.stream({ model: 'gpt-4o-mini', messages, temperature: 0 }));

    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe(content);
    expect(completion).toEqual({ content, toolCalls: [], usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 }, model: 'gpt-4o-mini-2024-07-18' });
    expect(fake.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, temperature: 0, messages });
  });

  it('counts tokens with the tokenizer when the stream carries no usage', async () => {
    fake.chat({ kind: 'answer', content: 'Cloudy, with rain later.', usage: false });
    const { completion } = await drain(model.stream({ messages }));
    expect(completion.usage).toEqual(estimateUsage(messages, 'Cloudy, with rain later.'));
    expect(completion.usage.promptTokens).toBeGreaterThan(5);
    expect(completion.model).toBe('default-model');
  });

  it('answers upstream_error for an HTTP error before the first piece', async () => {
    fake.chat({ kind: 'error', status: 503, message: 'Model is loading' });
    const error = await expectError(drain(model.stream({ messages })), 'upstream_error');
    expect(error.message).toBe('The language model provider answered HTTP 503: Model is loading');
  });

  it('answers upstream_error within the time-out when no chunk ever comes', async () => {
    fake.chat({ kind: 'stall' });
    const started = performance.now();
    const error = await expectError(drain(model.stream({ messages })), 'upstream_error');
    expect(error.message).toBe(`The language model provider did not answer within ${TIMEOUT_MS} ms.`);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
  });

  it('answers upstream_error when the stream stalls after its first piece, and drops the request', async () => {
    fake.chat({ kind: 'stall-mid-answer' });
    const stream = model.stream({ messages });
    const first = await stream.next();
    expect(first).toEqual({ done: false, value: 'Echo: ' });
    const started = performance.now();
    const error = await expectError(stream.next(), 'upstream_error');
    expect(error.message).toBe(`The language model provider stopped sending its answer for ${TIMEOUT_MS} ms.`);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('does not count a slow consumer as a stalled provider', async () => {
    fake.chat({ kind: 'answer', content: 'one two three' });
    const clock = new ManualClock();
    const timed = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'sk-test-key', model: 'default-model', timeoutMs: TIMEOUT_MS, clock });
    // The consumer holds each piece past the stall bound: were the bound running meanwhile, it would expire.
    const { pieces } = await drain(timed.stream({ messages }), () => {
      clock.advance(TIMEOUT_MS + 100);
      return Promise.resolve();
    });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('one two three');
  });

  it.each([
    ['not JSON', { kind: 'garbage' as const }],
    ['JSON of another shape', { kind: 'garbage' as const, body: '{"hello": "world"}' }],
    ['an error event', { kind: 'garbage' as const, body: '{"error": {"message": "overloaded"}}' }],
  ])('answers upstream_error for a chunk that is %s', async (_label, script) => {
    fake.chat(script);
    await expectError(drain(model.stream({ messages })), 'upstream_error');
  });

  it('answers upstream_error for a stream that ends before the answer is finished', async () => {
    fake.chat({ kind: 'answer', content: 'It is sunny and', finishReason: null });
    const error = await expectError(drain(model.stream({ messages })), 'upstream_error');
    expect(error.message).toContain('the stream ended before the answer was complete');
  });

  it('answers upstream_error for a stream with no choices at all', async () => {
    fake.chat({ kind: 'no-choices' });
    await expectError(drain(model.stream({ messages })), 'upstream_error');
  });

  it('answers upstream_error when the provider cannot be reached', async () => {
    const unreachable = new OpenAIChatModel({ baseURL: await refusedBaseURL(), apiKey: 'k', model: 'm', timeoutMs: TIMEOUT_MS });
    const error = await expectError(drain(unreachable.stream({ messages })), 'upstream_error');
    expect(error.message).toContain('could not be reached');
  });

  it('stops the upstream request when the consumer stops reading', async () => {
    fake.chat({ kind: 'stall-mid-answer' });
    const stream = model.stream({ messages });
    await stream.next();
    await stream.return(undefined as never);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('stops the upstream request and rejects with the reason when the caller aborts mid-stream', async () => {
    fake.chat({ kind: 'stall-mid-answer' });
    const controller = new AbortController();
    const reason = new Error('client went away');
    const stream = model.stream({ messages, signal: controller.signal });
    await stream.next();
    const pending = stream.next();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('assembles tool calls from interleaved fragments, in their index order, with the text of the round', async () => {
    fake.chat({ kind: 'tool-calls', content: 'Checking.', calls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Lisbon","days":3}' }, { id: 'c2', name: 'tides', arguments: '{}' }] });
    const tools = [{ name: 'weather', description: 'Forecast', parameters: { type: 'object' } }];
    const { pieces, completion } = await drain(model.stream({ messages, tools }));
    expect(pieces.join('')).toBe('Checking.');
    expect(completion.toolCalls).toEqual([
      { id: 'c1', name: 'weather', arguments: '{"city":"Lisbon","days":3}' },
      { id: 'c2', name: 'tides', arguments: '{}' },
    ]);
    expect(fake.requests[0]?.body).toMatchObject({ tools: [{ type: 'function', function: tools[0] }], tool_choice: 'auto' });
  });

  it('answers upstream_error for a streamed tool call that never got its name', async () => {
    fake.chat({ kind: 'tool-calls', calls: [{ id: 'c1', name: '', arguments: '{}' }] });
    await expectError(drain(model.stream({ messages })), 'upstream_error');
  });
});
