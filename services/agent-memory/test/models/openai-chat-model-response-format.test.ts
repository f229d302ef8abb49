import { expectError } from '@agent-platform/kit/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatMessage } from '../../src/models/chat-model.js';
import { DECISIONS_FORMAT, FACTS_FORMAT, FACTS_INSTRUCTIONS } from '../../src/models/extraction-protocol.js';
import { ObservedChatModel } from '../../src/models/observed-chat-model.js';
import { OpenAIChatModel } from '../../src/models/openai-chat-model.js';
import { startFakeOpenAI, type ChatScript, type FakeOpenAI } from '../support/fake-openai.js';

const TIMEOUT_MS = 2_000;
const messages: ChatMessage[] = [
  { role: 'system', content: FACTS_INSTRUCTIONS },
  { role: 'user', content: JSON.stringify({ user: 'I moved to Lisbon.', assistant: 'Welcome to Lisbon!' }) },
];
const factsAnswer = '{"facts":["I moved to Lisbon."]}';
const factsWire = { type: 'json_schema', json_schema: { name: FACTS_FORMAT.name, schema: FACTS_FORMAT.schema, strict: true } };

let fake: FakeOpenAI;
let model: OpenAIChatModel;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  model = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'sk-test-key', model: 'default-model', timeoutMs: TIMEOUT_MS });
});

afterEach(async () => {
  await fake.close();
});

async function drain(stream: AsyncGenerator<string, ChatCompletion, void>): Promise<{ pieces: string[]; completion: ChatCompletion }> {
  const pieces: string[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return { pieces, completion: next.value };
    pieces.push(next.value);
  }
}

function sentBody(index: number): Record<string, unknown> {
  const body = fake.requests[index]?.body;
  if (typeof body !== 'object' || body === null) throw new Error(`request ${index} has no JSON body`);
  return body as Record<string, unknown>;
}

describe('OpenAIChatModel with a responseFormat', () => {
  it('sends it as a strict json_schema response_format and returns the text the model wrote', async () => {
    fake.chat({ kind: 'answer', content: factsAnswer });
    const completion = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(completion.content).toBe(factsAnswer);
    expect(sentBody(0)['response_format']).toEqual(factsWire);
    expect(sentBody(0)).toMatchObject({ model: 'default-model', messages });
  });

  it('sends it on a streamed request too', async () => {
    const answer = '{"decisions":[{"event":"ADD","id":null,"text":"I moved to Lisbon."}]}';
    fake.chat({ kind: 'answer', content: answer });
    const { pieces, completion } = await drain(model.stream({ messages, responseFormat: DECISIONS_FORMAT }));
    expect(pieces.join('')).toBe(answer);
    expect(completion.content).toBe(answer);
    expect(sentBody(0)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(sentBody(0)['response_format']).toEqual({ type: 'json_schema', json_schema: { name: DECISIONS_FORMAT.name, schema: DECISIONS_FORMAT.schema, strict: true } });
  });

  it('sends no response_format when the request asks for none', async () => {
    await model.complete({ messages });
    await drain(model.stream({ messages }));
    expect(sentBody(0)).not.toHaveProperty('response_format');
    expect(sentBody(1)).not.toHaveProperty('response_format');
  });

  it('is passed on by ObservedChatModel', async () => {
    const observed = new ObservedChatModel(model, { name: 'openai' });
    await observed.complete({ messages, responseFormat: FACTS_FORMAT });
    await drain(observed.stream({ messages, responseFormat: FACTS_FORMAT }));
    expect(sentBody(0)['response_format']).toEqual(factsWire);
    expect(sentBody(1)['response_format']).toEqual(factsWire);
  });
});

describe('OpenAIChatModel on a server without structured outputs', () => {
  it.each<[string, ChatScript]>([
    ['a 400 naming response_format', { kind: 'refuse-response-format', content: factsAnswer }],
    ['a 422 naming json_schema', { kind: 'refuse-response-format', status: 422, message: 'unknown variant `json_schema`, expected `text` or `json_object`', content: factsAnswer }],
    [
      "a validator's 422 pointing at response_format",
      { kind: 'refuse-response-format', status: 422, body: { detail: [{ loc: ['body', 'response_format', 'type'], msg: 'Input should be text or json_object' }] }, content: factsAnswer },
    ],
  ])('retries once without response_format after %s, and sends it no more', async (_label, script) => {
    fake.chat(script);
    const first = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(first.content).toBe(factsAnswer);
    expect(fake.requests).toHaveLength(2);
    expect(sentBody(0)['response_format']).toEqual(factsWire);
    // The retry is the same request but for the one field.
    const { response_format: _dropped, ...rest } = sentBody(0);
    expect(sentBody(1)).toEqual(rest);

    const second = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(second.content).toBe(factsAnswer);
    expect(fake.requests).toHaveLength(3);
    expect(sentBody(2)).not.toHaveProperty('response_format');
  });

  it('falls back the same way for a streamed request', async () => {
    fake.chat({ kind: 'refuse-response-format', content: factsAnswer });
    const first = await drain(model.stream({ messages, responseFormat: FACTS_FORMAT }));
    expect(first.pieces.join('')).toBe(factsAnswer);
    expect(fake.requests).toHaveLength(2);
    expect(sentBody(0)).toMatchObject({ stream: true, response_format: factsWire });
    expect(sentBody(1)).toMatchObject({ stream: true });
    expect(sentBody(1)).not.toHaveProperty('response_format');

    await drain(model.stream({ messages, responseFormat: FACTS_FORMAT }));
    expect(fake.requests).toHaveLength(3);
    expect(sentBody(2)).not.toHaveProperty('response_format');
  });

  it('retries only once: a failure of the retry is an upstream_error', async () => {
    fake.chatNext({ kind: 'refuse-response-format' }, { kind: 'error', status: 500, message: 'Model crashed' });
    const error = await expectError(model.complete({ messages, responseFormat: FACTS_FORMAT }), 'upstream_error');
    expect(error.message).toBe('The language model provider answered HTTP 500: Model crashed');
    expect(fake.requests).toHaveLength(2);
  });

  it.each<[string, ChatScript]>([
    ['a 400 for another reason', { kind: 'error', status: 400, message: "This model's maximum context length is 8192 tokens." }],
    ['a 500 that names response_format', { kind: 'error', status: 500, message: 'Internal error while applying response_format' }],
    ['a 429 that names json_schema', { kind: 'error', status: 429, message: 'Too many json_schema requests', code: 'rate_limit_exceeded' }],
  ])('answers upstream_error for %s, without retrying or forgetting response_format', async (_label, script) => {
    fake.chatNext(script);
    const error = await expectError(model.complete({ messages, responseFormat: FACTS_FORMAT }), 'upstream_error');
    expect(error.message).toMatch(/^The language model provider answered HTTP (400|500|429): /);
    expect(fake.requests).toHaveLength(1);

    await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(sentBody(1)['response_format']).toEqual(factsWire);
  });

  it('does not retry a 400 naming response_format when it sent none', async () => {
    fake.chat({ kind: 'error', status: 400, message: "Unknown parameter: 'response_format'." });
    await expectError(model.complete({ messages }), 'upstream_error');
    expect(fake.requests).toHaveLength(1);
  });
});
