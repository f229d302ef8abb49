import type { Actor } from '@agent-platform/kit';
import { defineEntity, p } from '@mikro-orm/postgresql';
import type { DatasetItemInput } from '../datasets/datasets.entity.js';
import type { ScorerSpec } from './scorers.js';

export const EVAL_STATUSES = ['running', 'completed'] as const;
export type EvalStatus = (typeof EVAL_STATUSES)[number];

/** Where an item of an eval is (0017_evals says what each means). */
export const EVAL_RESULT_STATES = ['pending', 'running', 'scoring', 'scored'] as const;
export type EvalResultState = (typeof EVAL_RESULT_STATES)[number];

/** One scorer's verdict on one item, as stored and answered. */
export interface StoredScore {
  name: string;
  type: string;
  score: number;
  passed: boolean;
  reason: string | null;
}

export const EvalSchema = defineEntity({
  name: 'Eval',
  tableName: 'evals',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    /** The dataset its items were copied from; it may be deleted since. */
    datasetId: p.string(),
    agentId: p.string(),
    /** Resolved when the eval began: every item runs as this version. */
    agentVersion: p.integer(),
    scorers: p.json<ScorerSpec[]>().columnType('jsonb'),
    /** How many of its runs may be queued or running at once. */
    concurrency: p.integer(),
    status: p.enum(EVAL_STATUSES),
    itemCount: p.integer(),
    /** As whom its runs act (decisions §12), stored as background runs store it. */
    actor: p.json<Actor>().columnType('jsonb'),
    createdAt: p.datetime(),
    completedAt: p.datetime().strictNullable(),
  },
});

export class Eval extends EvalSchema.class {}
EvalSchema.setClass(Eval);

export const EvalResultSchema = defineEntity({
  name: 'EvalResult',
  tableName: 'eval_results',
  properties: {
    evalId: p.string().primary(),
    /** The item's place in the dataset when the eval began, from 0: the order results are answered in. */
    position: p.integer().primary(),
    itemId: p.string(),
    input: p.json<DatasetItemInput>().columnType('jsonb'),
    expected: p.text().strictNullable(),
    state: p.enum(EVAL_RESULT_STATES),
    runId: p.string().strictNullable(),
    leaseUntil: p.datetime().strictNullable(),
    /** Copied from the run when scored, so that the result outlives it. */
    runStatus: p.text().strictNullable(),
    output: p.text().strictNullable(),
    error: p.json<{ code: string; message: string }>().columnType('jsonb').strictNullable(),
    scores: p.json<StoredScore[]>().columnType('jsonb').strictNullable(),
    passed: p.boolean().strictNullable(),
    durationMs: p.integer().strictNullable(),
    totalTokens: p.integer().strictNullable(),
    credits: p.integer().strictNullable(),
    scoredAt: p.datetime().strictNullable(),
  },
});

export class EvalResult extends EvalResultSchema.class {}
EvalResultSchema.setClass(EvalResult);
