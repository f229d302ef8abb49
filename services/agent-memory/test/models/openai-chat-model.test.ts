import { DomainError } from '@agent-platform/kit';
import { expectError } from '@agent-platform/kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../src/models/chat-model.js';
import { OpenAIChatModel } from '../../src/models/openai-chat-model.js';
import { estimateUsage } from '../../src/models/usage.js';
import { refusedBaseURL, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.js';

const TIMEOUT_MS = 300;
const messages: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'What is the capital of France?' },
];

let fake: FakeOpenAI;
let model: OpenAIChatModel;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  model = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'sk-test-key', model: 'default-model', timeoutMs: TIMEOUT_MS });
});

afterEach(async () => {
  await fake.close();
});

describe('OpenAIChatModel.complete', () => {
  it('sends the request OpenAI expects and returns the content, usage and model of the answer', async () => {
    const completion = await model.complete({ model: 'llama3.2', messages, temperature: 0.3, topP: 0.9, maxTokens: 50 });

    expect(completion).toEqual({
      content: 'Echo: What is the capital of France?',
      toolCalls: [],
      usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
      model: 'llama3.2',
    });
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test-key');
    expect(request?.body).toMatchObject({ model: 'llama3.2', messages, temperature: 0.3, top_p: 0.9, max_tokens: 50 });
    expect(request?.body).not.toHaveProperty('stream_options');
  });

  it('sends tools, calls and results in the provider format, and returns the calls it asks for (null text and all)', async () => {
    fake.chat({ kind: 'tool-calls', calls: [{ id: 'call_p1', name: 'weather', arguments: '{"city":"Paris"}' }] });
    const history: ChatMessage[] = [
      ...messages,
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_a', name: 'weather', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_a', content: '{"error":"city is required"}' },
    ];
    const tools = [{ name: 'weather', description: 'Forecast', parameters: { type: 'object' } }];
    const completion = await model.complete({ messages: history, tools, toolChoice: 'none' });
    expect(completion).toMatchObject({ content: '', toolCalls: [{ id: 'call_p1', name: 'weather', arguments: '{"city":"Paris"}' }] });
    expect(fake.requests[0]?.body).toMatchObject({
      tools: [{ type: 'function', function: tools[0] }],
      tool_choice: 'none',
      messages: [
        ...messages.map(({ role }) => ({ role })),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_a', content: '{"error":"city is required"}' },
      ],
    });
  });

  it('uses its default model when the request names none, and reports the model that answered', async () => {
    fake.chat({ kind: 'answer', model: 'gpt-4o-2024-08-06' });
    const completion = await model.complete({ messages });
    expect(fake.requests[0]?.body).toMatchObject({ model: 'default-model' });
    expect(fake.requests[0]?.body).not.toHaveProperty('temperature');
    expect(completion.model).toBe('gpt-4o-2024-08-06');
  });

  it('sends max_completion_tokens instead when configured to', async () => {
    const reasoning = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'k', model: 'o4-mini', maxTokensField: 'max_completion_tokens' });
    await reasoning.complete({ messages, maxTokens: 64 });
    expect(fake.requests[0]?.body).toMatchObject({ max_completion_tokens: 64 });
    expect(fake.requests[0]?.body).not.toHaveProperty('max_tokens');
  });

  it('counts tokens with the tokenizer when the provider reports no usage', async () => {
    fake.chat({ kind: 'answer', content: 'Paris is the capital of France.', usage: false });
    const completion = await model.complete({ messages });
    expect(completion.usage).toEqual(estimateUsage(messages, 'Paris is the capital of France.'));
    expect(completion.usage.completionTokens).toBeGreaterThan(3);
    expect(completion.usage.totalTokens).toBe(completion.usage.promptTokens + completion.usage.completionTokens);
  });

  it('answers upstream_error for an HTTP error, without retrying', async () => {
    fake.chat({ kind: 'error', status: 500, message: 'The server had an error while processing your request.' });
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    expect(error.message).toBe('The language model provider answered HTTP 500: The server had an error while processing your request.');
    expect(fake.requests).toHaveLength(1);
  });

  it('answers upstream_error for a rate limit, without waiting to retry', async () => {
    fake.chat({ kind: 'error', status: 429, message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' });
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    expect(error.message).toContain('HTTP 429');
    expect(fake.requests).toHaveLength(1);
  });

  it('does not repeat what the provider says about rejected credentials', async () => {
    fake.chat({ kind: 'error', status: 401, message: 'Incorrect API key provided: sk-test-***-key.' });
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    expect(error.message).toBe("The language model provider refused the platform's credentials (HTTP 401).");
  });

  it('answers upstream_error within the time-out when the provider never answers', async () => {
    fake.chat({ kind: 'stall' });
    const started = performance.now();
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    const elapsed = performance.now() - started;
    expect(error.message).toBe(`The language model provider did not answer within ${TIMEOUT_MS} ms.`);
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_000);
    // The stalled request is abandoned, not left open.
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('answers upstream_error within the time-out when the body stops half-way', async () => {
    fake.chat({ kind: 'stall-mid-answer' });
    const started = performance.now();
    await expectError(model.complete({ messages }), 'upstream_error');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
  });

  it.each([
    ['not JSON', { kind: 'garbage' as const }],
    ['JSON of another shape', { kind: 'garbage' as const, body: '{"hello": "world"}' }],
    ['plain text', { kind: 'garbage' as const, body: 'Bad gateway', contentType: 'text/plain' }],
    ['a message without text', { kind: 'garbage' as const, body: '{"choices": [{"message": {"role": "assistant", "content": null}}]}' }],
  ])('answers upstream_error for an answer that is %s', async (_label, script) => {
    fake.chat(script);
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    expect(error.message).toMatch(/^The language model provider sent an answer that could not be understood/);
  });

  it('answers upstream_error for an empty choices list', async () => {
    fake.chat({ kind: 'no-choices' });
    const error = await expectError(model.complete({ messages }), 'upstream_error');
    expect(error.message).toContain('no choices');
  });

  it('answers upstream_error when the provider cannot be reached', async () => {
    const unreachable = new OpenAIChatModel({ baseURL: await refusedBaseURL(), apiKey: 'k', model: 'm', timeoutMs: TIMEOUT_MS });
    const error = await expectError(unreachable.complete({ messages }), 'upstream_error');
    expect(error.message).toBe('The language model provider could not be reached (ECONNREFUSED).');
    expect(error.cause).toBeDefined();
  });

  it('stops the upstream request and rejects with the reason when the caller aborts', async () => {
    fake.chat({ kind: 'stall' });
    const controller = new AbortController();
    const reason = new Error('client went away');
    const pending = model.complete({ messages, signal: controller.signal });
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('sends nothing when the signal is already aborted', async () => {
    const rejection = await model.complete({ messages, signal: AbortSignal.abort() }).catch((error: unknown) => error);
    expect(rejection).not.toBeInstanceOf(DomainError);
    expect(rejection).toMatchObject({ name: 'AbortError' });
    expect(fake.requests).toHaveLength(0);
  });
});
