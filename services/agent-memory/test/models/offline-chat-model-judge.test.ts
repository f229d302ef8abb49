import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatMessage } from '../../src/models/chat-model.js';
import { JUDGE_FORMAT, JUDGE_INSTRUCTIONS, offlineJudgement, type JudgeQuestion } from '../../src/models/judge-protocol.js';
import { OfflineChatModel } from '../../src/models/offline-chat-model.js';
import { estimateUsage } from '../../src/models/usage.js';

const model = new OfflineChatModel();
// The schema's own validator: an answer the judge's caller would refuse is a failure here too.
const schemaValid = new Ajv2020().compile(JUDGE_FORMAT.schema);
const rubric = 'Does the output answer the question correctly?';

function asked(question: unknown): ChatMessage[] {
  return [
    { role: 'system', content: JUDGE_INSTRUCTIONS },
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

describe('offlineJudgement', () => {
  it("scores the share of the expected answer's distinct words found in the output", () => {
    // Expected words: paris, is, the, capital, of, france (6). The output has the, capital, is, paris: 4 of them.
    expect(offlineJudgement({ rubric, input: 'Capital of France?', output: 'The capital is Paris', expected: 'Paris is the capital of France' })).toEqual({
      score: 0.667,
      reason: "Found 4 of the expected answer's 6 distinct words in the output.",
    });
  });

  it('counts a word repeated in the expected answer once, and ignores case and punctuation', () => {
    // Distinct: the, cat, sat, on, mat (5); found: the, cat, mat (3).
    const answer = offlineJudgement({ rubric, input: '', output: 'MAT! Cat... THE', expected: 'The cat sat on the mat.' });
    expect(answer).toEqual({ score: 0.6, reason: "Found 3 of the expected answer's 5 distinct words in the output." });
  });

  it('rounds to three decimals', () => {
    // 1 of 3 and 2 of 3.
    expect(offlineJudgement({ rubric, input: '', output: 'alpha', expected: 'alpha beta gamma' }).score).toBe(0.333);
    expect(offlineJudgement({ rubric, input: '', output: 'alpha beta', expected: 'alpha beta gamma' }).score).toBe(0.667);
  });

  it('scores 1 when every word is there and 0 when none is', () => {
    expect(offlineJudgement({ rubric, input: '', output: 'It is 42, of course.', expected: '42' }).score).toBe(1);
    expect(offlineJudgement({ rubric, input: '', output: 'No idea.', expected: 'Forty-two' })).toEqual({ score: 0, reason: "Found 0 of the expected answer's 2 distinct words in the output." });
  });

  it('finds words only as whole words, in any script, accents and all', () => {
    // "cat" is not found inside "category"; é composed and decomposed is one word.
    expect(offlineJudgement({ rubric, input: '', output: 'category', expected: 'cat' }).score).toBe(0);
    expect(offlineJudgement({ rubric, input: '', output: 'Un cafe\u0301 à Zürich, 東京', expected: 'café Zürich 東京' }).score).toBe(1);
  });

  it('scores 0 without an expected answer, saying it needs one', () => {
    const answer = offlineJudgement({ rubric, input: 'Hi', output: 'Hello there' });
    expect(answer.score).toBe(0);
    expect(answer.reason).toContain('needs an expected answer');
  });

  it('scores 0 when the expected answer has no words', () => {
    expect(offlineJudgement({ rubric, input: '', output: '?!', expected: '?!' })).toEqual({ score: 0, reason: 'The expected answer has no words to look for in the output.' });
  });
});

describe('OfflineChatModel asked for a judgement', () => {
  const question: JudgeQuestion = { rubric, input: 'What is the capital of France?', output: 'The capital is Paris', expected: 'Paris is the capital of France' };

  it('answers the offline judgement of the last user message as JUDGE_FORMAT JSON, without tool calls', async () => {
    const messages = asked(question);
    const tools = [{ name: 'capital', description: 'Looks a capital up', parameters: { type: 'object' } }];
    const completion = await model.complete({ messages, tools, responseFormat: JUDGE_FORMAT, temperature: 0 });
    expect(JSON.parse(completion.content)).toEqual(offlineJudgement(question));
    expect(JSON.parse(completion.content)).toMatchObject({ score: 0.667 });
    expect(schemaValid(JSON.parse(completion.content))).toBe(true);
    expect(completion).toMatchObject({ toolCalls: [], model: 'offline', usage: estimateUsage(messages, completion.content, tools) });
  });

  it('streams pieces that join into the same JSON', async () => {
    const request = { messages: asked(question), responseFormat: JUDGE_FORMAT };
    const { pieces, completion } = await drain(model.stream(request));
    expect(pieces.join('')).toBe(completion.content);
    expect(completion).toEqual(await model.complete(request));
  });

  it.each<[string, string]>([
    ['not JSON', 'Is this good?'],
    ['JSON null', 'null'],
    ['a question without its output', JSON.stringify({ rubric, input: 'Hi' })],
    ['a question with an expected answer that is not text', JSON.stringify({ rubric, input: 'Hi', output: 'Hello', expected: 42 })],
    ['an extraction question', JSON.stringify({ user: 'I moved.', assistant: 'OK' })],
  ])('scores 0 with the reason, not an error, for %s', async (_label, content) => {
    const completion = await model.complete({ messages: asked(content), responseFormat: JUDGE_FORMAT });
    const answer: unknown = JSON.parse(completion.content);
    expect(answer).toEqual({ score: 0, reason: expect.stringContaining('question was not understood') });
    expect(schemaValid(answer)).toBe(true);
  });

  it('scores 0 with the reason when there is no user message at all', async () => {
    const completion = await model.complete({ messages: [{ role: 'system', content: JUDGE_INSTRUCTIONS }], responseFormat: JUDGE_FORMAT });
    expect(JSON.parse(completion.content)).toMatchObject({ score: 0, reason: expect.stringContaining('not understood') });
  });

  it('answers as a chat without the format: the format is what makes it judge', async () => {
    const completion = await model.complete({ messages: asked(question) });
    expect(completion.content).toContain('I am the built-in offline model');
  });
});
