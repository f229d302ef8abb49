import { DomainError, FieldErrors } from '@agent-platform/kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JUDGED_OUTPUT_MAX } from '../../src/evals/judge.js';
import { checkScorers, score, type LlmJudgeSpec, type ScorerSpec } from '../../src/evals/scorers.js';
import type { ChatCompletion, ChatModel, ChatRequest } from '../../src/models/chat-model.js';
import { JUDGE_FORMAT, JUDGE_INSTRUCTIONS } from '../../src/models/judge-protocol.js';
import { OfflineChatModel } from '../../src/models/offline-chat-model.js';
import { OpenAIChatModel } from '../../src/models/openai-chat-model.js';
import { estimateUsage } from '../../src/models/usage.js';
import { DEFAULT_WIRE_USAGE, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.js';

const rubric = 'Does the output name the capital of France correctly?';
const sample = { input: 'What is the capital of France?', output: 'The capital is Paris', expected: 'Paris is the capital of France' };
const wireUsage = { promptTokens: DEFAULT_WIRE_USAGE.prompt_tokens, completionTokens: DEFAULT_WIRE_USAGE.completion_tokens, totalTokens: DEFAULT_WIRE_USAGE.total_tokens };

/** A judge scorer as an eval keeps it, through the same validation. */
function judgeSpec(fields: Record<string, unknown> = {}): LlmJudgeSpec {
  const errors = new FieldErrors();
  const [spec] = checkScorers([{ type: 'llm_judge', rubric, ...fields }], errors);
  errors.throwIfAny();
  if (spec?.type !== 'llm_judge') throw new Error('not a judge');
  return spec;
}

/** A model that answers every request with `answer` (or throws it), keeping what it was asked. */
function scriptedModel(answer: string | Error): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    name: 'scripted',
    requests,
    complete(request) {
      requests.push(request);
      if (answer instanceof Error) return Promise.reject(answer);
      return Promise.resolve<ChatCompletion>({ content: answer, toolCalls: [], usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120 }, model: 'scripted' });
    },
    stream() {
      throw new Error('the judge does not stream');
    },
  };
}

describe('llm_judge against an OpenAI-compatible provider', () => {
  let fake: FakeOpenAI;
  let judge: OpenAIChatModel;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    judge = new OpenAIChatModel({ baseURL: fake.baseURL, apiKey: 'sk-test-key', model: 'judge-model', timeoutMs: 2_000 });
  });

  afterEach(async () => {
    await fake.close();
  });

  function sentBody(): Record<string, unknown> {
    const body = fake.requests[0]?.body;
    if (typeof body !== 'object' || body === null) throw new Error('no JSON body was sent');
    return body as Record<string, unknown>;
  }

  it('asks with the judge schema as a strict response_format, at temperature 0, the question as JSON', async () => {
    fake.chat({ kind: 'answer', content: '{"score":0.8,"reason":"Names Paris, but tersely."}' });
    await score(judgeSpec(), sample, { judge });
    expect(fake.requests).toHaveLength(1);
    const body = sentBody();
    expect(body['response_format']).toEqual({ type: 'json_schema', json_schema: { name: JUDGE_FORMAT.name, schema: JUDGE_FORMAT.schema, strict: true } });
    expect(body).toMatchObject({ model: 'judge-model', temperature: 0 });
    expect(body['messages']).toEqual([
      { role: 'system', content: JUDGE_INSTRUCTIONS },
      { role: 'user', content: JSON.stringify({ rubric, input: sample.input, output: sample.output, expected: sample.expected }) },
    ]);
  });

  it("scores with the judge's answer, passing at or above the threshold, and returns the tokens it cost", async () => {
    fake.chat({ kind: 'answer', content: '{"score":0.8,"reason":"Names Paris, but tersely."}' });
    expect(await score(judgeSpec({ name: 'correct' }), sample, { judge })).toEqual({
      name: 'correct',
      type: 'llm_judge',
      score: 0.8,
      passed: true,
      reason: 'Names Paris, but tersely.',
      usage: wireUsage,
    });
    expect(await score(judgeSpec({ threshold: 0.8 }), sample, { judge })).toMatchObject({ score: 0.8, passed: true });
    expect(await score(judgeSpec({ threshold: 0.81 }), sample, { judge })).toMatchObject({ score: 0.8, passed: false, reason: 'Names Paris, but tersely.' });
  });

  it('sends the model name it is given, and no expected answer when the item has none', async () => {
    fake.chat({ kind: 'answer', content: '{"score":1,"reason":"Fine."}' });
    await score(judgeSpec(), { input: 'Hi', output: 'Hello!', expected: null }, { judge, judgeModel: 'gpt-4o-mini' });
    expect(sentBody()).toMatchObject({ model: 'gpt-4o-mini' });
    const messages = sentBody()['messages'] as { content: string }[];
    expect(JSON.parse(messages[1]?.content ?? '')).toEqual({ rubric, input: 'Hi', output: 'Hello!' });
  });

  it.each<[string, string]>([
    ['text that is not JSON', 'The output is good, I would say 0.9.'],
    ['a score above 1 (not clamped)', '{"score":1.5,"reason":"Very good."}'],
    ['a negative score', '{"score":-0.1,"reason":"Bad."}'],
    ['a score as text', '{"score":"0.9","reason":"Good."}'],
    ['no reason', '{"score":0.9}'],
    ['a key the schema does not have', '{"score":0.9,"reason":"Good.","confidence":0.5}'],
  ])('fails, with the tokens it cost, for an answer of %s', async (_label, content) => {
    fake.chat({ kind: 'answer', content });
    expect(await score(judgeSpec(), sample, { judge })).toEqual({
      name: 'llm_judge',
      type: 'llm_judge',
      score: 0,
      passed: false,
      reason: "The judge's answer was not understood.",
      usage: wireUsage,
    });
  });

  it('reads the JSON object in an answer wrapped in prose (a server without structured outputs)', async () => {
    fake.chat({ kind: 'answer', content: 'Here is my grade:\n```json\n{"score":0.25,"reason":"Wrong city."}\n```' });
    expect(await score(judgeSpec(), sample, { judge })).toMatchObject({ score: 0.25, passed: false, reason: 'Wrong city.' });
  });

  it('fails with the reason, never throwing, when the provider answers an HTTP error', async () => {
    fake.chat({ kind: 'error', status: 500, message: 'The server had an error while processing your request.' });
    const result = await score(judgeSpec(), sample, { judge });
    expect(result).toEqual({
      name: 'llm_judge',
      type: 'llm_judge',
      score: 0,
      passed: false,
      reason: 'The language model provider answered HTTP 500: The server had an error while processing your request.',
    });
  });

  it('fails with the reason when the provider sends garbage', async () => {
    fake.chat({ kind: 'garbage' });
    const result = await score(judgeSpec(), sample, { judge });
    expect(result).toMatchObject({ score: 0, passed: false, reason: expect.stringContaining('could not be understood') });
    expect(result.usage).toBeUndefined();
  });

  it("keeps the judge's reason within 500 characters", async () => {
    fake.chat({ kind: 'answer', content: JSON.stringify({ score: 0.5, reason: 'Because. '.repeat(200) }) });
    const result = await score(judgeSpec(), sample, { judge });
    expect(result.reason).toHaveLength(500);
    expect(result.reason?.endsWith('…')).toBe(true);
  });
});

describe('llm_judge with the offline model', () => {
  const judge = new OfflineChatModel();

  it("scores the share of the expected answer's words in the output, with its usage", async () => {
    // paris, is, the, capital, of, france: the output has 4 of the 6.
    const result = await score(judgeSpec({ threshold: 0.6 }), sample, { judge });
    expect(result).toMatchObject({ name: 'llm_judge', type: 'llm_judge', score: 0.667, passed: true, reason: "Found 4 of the expected answer's 6 distinct words in the output." });
    expect(result.usage?.totalTokens).toBeGreaterThan(0);
    expect(result.usage).toEqual(
      estimateUsage(
        [
          { role: 'system', content: JUDGE_INSTRUCTIONS },
          { role: 'user', content: JSON.stringify({ rubric, ...sample }) },
        ],
        JSON.stringify({ score: 0.667, reason: "Found 4 of the expected answer's 6 distinct words in the output." }),
      ),
    );
    expect(await score(judgeSpec({ threshold: 0.7 }), sample, { judge })).toMatchObject({ score: 0.667, passed: false });
  });

  it('fails an item without an expected answer, saying why', async () => {
    const result = await score(judgeSpec(), { input: sample.input, output: sample.output }, { judge });
    expect(result).toMatchObject({ score: 0, passed: false, reason: expect.stringContaining('needs an expected answer') });
  });
});

describe('llm_judge, what it shows the judge and what it lets through', () => {
  it('shows the judge at most JUDGED_OUTPUT_MAX characters of a runaway output', async () => {
    const judge = scriptedModel('{"score":1,"reason":"Fine."}');
    await score(judgeSpec(), { input: 'Go on.', output: 'word '.repeat(20_000) }, { judge });
    const question = JSON.parse(judge.requests[0]?.messages[1]?.content ?? '') as { output: string };
    expect(question.output).toHaveLength(JUDGED_OUTPUT_MAX);
    expect(question.output.endsWith('…')).toBe(true);
  });

  it('passes the signal on, and rejects with its reason when the eval is cancelled', async () => {
    const cancelled = new Error('eval cancelled');
    const judge = scriptedModel(cancelled);
    const controller = new AbortController();
    await expect(score(judgeSpec(), sample, { judge, signal: controller.signal })).rejects.toBe(cancelled);
    expect(judge.requests[0]?.signal).toBe(controller.signal);
  });

  it('rethrows a failure that is not the provider’s (a fault of ours is not a score)', async () => {
    const judge = scriptedModel(new DomainError('internal_error', 'boom'));
    await expect(score(judgeSpec(), sample, { judge })).rejects.toMatchObject({ code: 'internal_error' });
  });

  it('turns an upstream_error from any adapter into a failed score with its message', async () => {
    const judge = scriptedModel(new DomainError('upstream_error', 'The language model provider did not answer within 30000 ms.'));
    const spec: ScorerSpec = judgeSpec({ name: 'tone' });
    expect(await score(spec, sample, { judge })).toEqual({ name: 'tone', type: 'llm_judge', score: 0, passed: false, reason: 'The language model provider did not answer within 30000 ms.' });
  });
});
