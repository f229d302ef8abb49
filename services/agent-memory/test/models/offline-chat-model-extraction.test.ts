import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatMessage, ChatRequest } from '../../src/models/chat-model.js';
import {
  DECISIONS_FORMAT,
  DECISIONS_INSTRUCTIONS,
  FACTS_FORMAT,
  FACTS_INSTRUCTIONS,
  type DecisionsQuestion,
  type FactsQuestion,
  type ResponseFormat,
} from '../../src/models/extraction-protocol.js';
import { OfflineChatModel } from '../../src/models/offline-chat-model.js';
import { estimateUsage } from '../../src/models/usage.js';

const model = new OfflineChatModel();
// The schemas' own validator: an answer the caller would refuse is a failure here too.
const ajv = new Ajv2020({ allowUnionTypes: true });
const schemaValid = (format: ResponseFormat, content: string): boolean => ajv.validate(format.schema, JSON.parse(content));

function asked(instructions: string, question: unknown): ChatMessage[] {
  return [
    { role: 'system', content: instructions },
    { role: 'user', content: typeof question === 'string' ? question : JSON.stringify(question) },
  ];
}

async function drain(stream: AsyncGenerator<string, ChatCompletion, void>): Promise<{ pieces: string[]; completion: ChatCompletion }> {
  const pieces: string[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return { pieces, completion: next.value };
    pieces.push(next.value);
  }
}

describe('OfflineChatModel asked for facts', () => {
  const turn: FactsQuestion = { user: 'I moved to Lisbon. The weather is nice! Can you tell me about trams? My sister lives in Porto.', assistant: 'Lisbon is lovely in May.' };

  it("answers the user's sentences about themselves, questions aside, as FACTS_FORMAT JSON", async () => {
    const messages = asked(FACTS_INSTRUCTIONS, turn);
    const completion = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(JSON.parse(completion.content)).toEqual({ facts: ['I moved to Lisbon.', 'My sister lives in Porto.'] });
    expect(schemaValid(FACTS_FORMAT, completion.content)).toBe(true);
    expect(completion).toMatchObject({ toolCalls: [], model: 'offline', usage: estimateUsage(messages, completion.content) });
  });

  it('calls no tool, even one its question names', async () => {
    const messages = asked(FACTS_INSTRUCTIONS, turn);
    const tools = [{ name: 'weather', description: 'Forecast', parameters: { type: 'object' } }];
    const request: ChatRequest = { messages, tools, responseFormat: FACTS_FORMAT };
    const completion = await model.complete(request);
    expect(completion.toolCalls).toEqual([]);
    expect(JSON.parse(completion.content)).toEqual({ facts: ['I moved to Lisbon.', 'My sister lives in Porto.'] });
    expect(completion.usage).toEqual(estimateUsage(messages, completion.content, tools));
    // Without the format, the same request is a tool call: the format is what changed the answer.
    expect((await model.complete({ messages, tools })).toolCalls).toHaveLength(1);
  });

  it('reads the last user message as the question', async () => {
    const messages = [...asked(FACTS_INSTRUCTIONS, { user: 'I work in Madrid.', assistant: 'Nice.' }), { role: 'assistant' as const, content: '{"facts":[]}' }, { role: 'user' as const, content: JSON.stringify(turn) }];
    const completion = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(JSON.parse(completion.content)).toEqual({ facts: ['I moved to Lisbon.', 'My sister lives in Porto.'] });
  });

  it('answers empty facts for a turn without the assistant part', async () => {
    const completion = await model.complete({ messages: asked(FACTS_INSTRUCTIONS, { user: turn.user }), responseFormat: FACTS_FORMAT });
    expect(completion.content).toBe('{"facts":[]}');
  });

  it('streams pieces that join into the same JSON', async () => {
    const request: ChatRequest = { messages: asked(FACTS_INSTRUCTIONS, turn), responseFormat: FACTS_FORMAT };
    const { pieces, completion } = await drain(model.stream(request));
    expect(pieces.join('')).toBe(completion.content);
    expect(completion).toEqual(await model.complete(request));
  });
});

describe('OfflineChatModel asked for decisions', () => {
  const question: DecisionsQuestion = {
    facts: [
      { fact: 'I live in Lisbon now.', nearest: [{ id: '0', text: 'I live in Porto.', score: 0.93 }, { id: '1', text: 'I like tea.', score: 0.2 }] },
      { fact: 'My sister lives in Porto.', nearest: [{ id: '1', text: 'I like tea.', score: 0.5 }, { id: '2', text: 'My brother lives in Porto.', score: 0.89 }] },
      { fact: 'I prefer green tea.', nearest: [{ id: '3', text: 'I drink tea.', score: 0.91 }, { id: '1', text: 'I like tea.', score: 0.97 }] },
      { fact: 'I drink coffee at 8.', nearest: [{ id: '4', text: 'I drink coffee at 7.', score: 0.9 }] },
      { fact: 'I have a cat.', nearest: [] },
    ],
  };

  it('updates the best-scoring item at 0.9 or more and adds the rest, one decision per fact in order', async () => {
    const completion = await model.complete({ messages: asked(DECISIONS_INSTRUCTIONS, question), responseFormat: DECISIONS_FORMAT });
    expect(JSON.parse(completion.content)).toEqual({
      decisions: [
        { event: 'UPDATE', id: '0', text: 'I live in Lisbon now.' },
        { event: 'ADD', id: null, text: 'My sister lives in Porto.' },
        { event: 'UPDATE', id: '1', text: 'I prefer green tea.' },
        { event: 'UPDATE', id: '4', text: 'I drink coffee at 8.' },
        { event: 'ADD', id: null, text: 'I have a cat.' },
      ],
    });
    expect(schemaValid(DECISIONS_FORMAT, completion.content)).toBe(true);
    expect(completion.toolCalls).toEqual([]);
  });
});

describe('OfflineChatModel asked a malformed question', () => {
  const malformed: [string, string | undefined][] = [
    ['not JSON', 'I moved to Lisbon.'],
    ['JSON null', 'null'],
    ['a JSON array', '[]'],
    ['the other question', JSON.stringify({ facts: [{ fact: 'I moved.', nearest: [] }] })],
    ['a question with a field of the wrong type', JSON.stringify({ user: 42, assistant: 'Hi', facts: [{ fact: 'I moved.', nearest: [{ id: 0, text: 'x', score: 1 }] }] })],
    ['no user message at all', undefined],
  ];

  it.each(malformed)('answers empty facts for %s', async (_label, content) => {
    const messages: ChatMessage[] = content === undefined ? [{ role: 'system', content: FACTS_INSTRUCTIONS }] : asked(FACTS_INSTRUCTIONS, content);
    const completion = await model.complete({ messages, responseFormat: FACTS_FORMAT });
    expect(completion.content).toBe('{"facts":[]}');
    expect(completion.toolCalls).toEqual([]);
    expect((await drain(model.stream({ messages, responseFormat: FACTS_FORMAT }))).completion.content).toBe('{"facts":[]}');
  });

  it.each([...malformed.filter(([label]) => label !== 'the other question'), ['the other question', JSON.stringify({ user: 'I moved.', assistant: 'OK' })] as [string, string]])(
    'answers empty decisions for %s',
    async (_label, content) => {
      const messages: ChatMessage[] = content === undefined ? [{ role: 'system', content: DECISIONS_INSTRUCTIONS }] : asked(DECISIONS_INSTRUCTIONS, content);
      const completion = await model.complete({ messages, responseFormat: DECISIONS_FORMAT });
      expect(completion.content).toBe('{"decisions":[]}');
      expect(completion.toolCalls).toEqual([]);
      expect((await drain(model.stream({ messages, responseFormat: DECISIONS_FORMAT }))).completion.content).toBe('{"decisions":[]}');
    },
  );

  it('answers as usual for a format it does not know', async () => {
    const completion = await model.complete({ messages: asked('Be brief.', 'Hello'), responseFormat: { name: 'other', schema: { type: 'object' } } });
    expect(completion.content).toContain('You said: "Hello"');
  });
});
