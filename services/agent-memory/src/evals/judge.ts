import { CHAT_MESSAGE_MAX, DomainError } from '@agent-platform/kit';
import { z } from 'zod';
import type { ChatCompletion } from '../models/chat-model.js';
import { JUDGE_FORMAT, JUDGE_INSTRUCTIONS, type JudgeQuestion } from '../models/judge-protocol.js';
import { firstJsonObject } from '../models/offline-chat-model.js';
import { bounded, failedScore, type Sample, type Score, type ScoreDeps } from './scores.js';

/**
 * Output shown to the judge, in characters: as much as a chat message. The platform pays for the
 * judge's tokens, so a runaway output must not make its judgement cost without limit.
 */
export const JUDGED_OUTPUT_MAX = CHAT_MESSAGE_MAX;

// The answer JUDGE_FORMAT asks for, nothing more: a score outside 0..1 is not clamped into it.
const judgeAnswer = z.strictObject({ score: z.number().min(0).max(1), reason: z.string() });

/** What the judge scorer is told (an `llm_judge` spec of scorers.ts). */
export interface JudgeScorer {
  name: string;
  type: 'llm_judge';
  rubric: string;
  /** The least score that passes. */
  threshold: number;
}

/**
 * `llm_judge`: the judge model grades the output by the rubric (judge-protocol.ts). Neither a
 * provider's failure nor an answer outside the schema throws: each is a failed score with its
 * reason, and the tokens an answer cost are in the score either way.
 */
export async function judgeScore(spec: JudgeScorer, sample: Sample, deps: ScoreDeps): Promise<Score> {
  const question: JudgeQuestion = {
    rubric: spec.rubric,
    input: sample.input,
    output: bounded(sample.output, JUDGED_OUTPUT_MAX),
    ...(sample.expected === undefined || sample.expected === null ? {} : { expected: sample.expected }),
  };
  let completion: ChatCompletion;
  try {
    completion = await deps.judge.complete({
      ...(deps.judgeModel === undefined ? {} : { model: deps.judgeModel }),
      messages: [
        { role: 'system', content: JUDGE_INSTRUCTIONS },
        { role: 'user', content: JSON.stringify(question) },
      ],
      responseFormat: JUDGE_FORMAT,
      temperature: 0,
      ...(deps.signal === undefined ? {} : { signal: deps.signal }),
    });
  } catch (error) {
    // Anything else is the caller's abort (its reason, rethrown) or a fault of ours, not the judge's.
    if (error instanceof DomainError && error.code === 'upstream_error') return failedScore(spec, error.message);
    throw error;
  }
  const answer = judgeAnswer.safeParse(answerJson(completion.content));
  if (!answer.success) return { ...failedScore(spec, "The judge's answer was not understood."), usage: completion.usage };
  const { score, reason } = answer.data;
  return { name: spec.name, type: spec.type, score, passed: score >= spec.threshold, reason: bounded(reason), usage: completion.usage };
}

/** The answer's JSON: the whole text, or (a server without structured outputs) the first object in it. */
function answerJson(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return firstJsonObject(content);
  }
}
