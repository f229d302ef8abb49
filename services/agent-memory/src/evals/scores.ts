import type { ChatModel, Usage } from '../models/chat-model.js';

export const SCORER_TYPES = ['contains', 'exact', 'regex', 'json_schema', 'llm_judge'] as const;
export type ScorerType = (typeof SCORER_TYPES)[number];

/** Longest reason a score gives, in characters: scores are stored per item and shown in lists. */
export const REASON_MAX = 500;

/** One dataset item's run, as a scorer sees it. */
export interface Sample {
  /** The message the agent was given. */
  input: string;
  /** What the agent answered. */
  output: string;
  expected?: string | null;
}

export interface Score {
  name: string;
  type: ScorerType;
  /** 0 to 1: deterministic scorers give 1 or 0, the judge anything between. */
  score: number;
  passed: boolean;
  /** Why it failed (every scorer), or the judge's reason; at most REASON_MAX characters. */
  reason?: string;
  /** The judge's tokens, for the eval to account for and charge. */
  usage?: Usage;
}

export interface ScoreDeps {
  /** The model that answers `llm_judge` (the offline one when no LLM is configured). */
  judge: ChatModel;
  /** A model name for the judge, over its default. */
  judgeModel?: string;
  /** The eval was cancelled: the judge's request stops, and `score` rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Who is scoring: a scorer's name and type. */
export interface Scorer {
  name: string;
  type: ScorerType;
}

export function passedScore(scorer: Scorer): Score {
  return { name: scorer.name, type: scorer.type, score: 1, passed: true };
}

export function failedScore(scorer: Scorer, reason: string): Score {
  return { name: scorer.name, type: scorer.type, score: 0, passed: false, reason: bounded(reason) };
}

/** A text cut to `max` characters (an ellipsis included), never inside a surrogate pair. */
export function bounded(text: string, max = REASON_MAX): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}
