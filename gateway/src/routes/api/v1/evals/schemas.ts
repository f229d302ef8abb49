import type { ComparedSide, EvalResult, Eval, ScoreChange } from '@agent-platform/proto/agents/v1/evals';
import { z } from 'zod';
import { iso, isoOrNull, pathId, queryInt, TenantQuery, Timestamp } from '../../../../http/schemas.js';
import { AgentVersionNumber } from '../agents/_agent_id/chat/schemas.js';

// The gateway checks the scorers' shapes and types; the agent-memory service decides the rest
// (a pattern that compiles, a schema Ajv accepts, names unique, items with `expected` where a
// scorer needs it) and names each offending field as the caller sent it (`scorers[1].value`).

export const EvalParams = z.object({ eval_id: pathId('eval', 'eval') });

const ScorerName = z.string().describe('How results and comparisons name the scorer; default its type. Unique within an eval.');

const MatchScorer = (type: 'contains' | 'exact', passes: string) =>
  z
    .object({
      type: z.literal(type),
      value: z.string().optional().describe("What to look for; absent: the item's `expected`."),
      case_sensitive: z.boolean().optional().describe('Default false.'),
      name: ScorerName.optional(),
    })
    .describe(passes);

const ScorerBody = z
  .discriminatedUnion('type', [
    MatchScorer('contains', 'Passes (1) when the output contains the value, else 0.'),
    MatchScorer('exact', 'Passes (1) when the output, trimmed, equals the value, else 0.'),
    z
      .object({
        type: z.literal('regex'),
        value: z.string().optional().describe("A pattern (RE2 syntax: no backreferences or lookarounds); absent: the item's `expected` as a pattern."),
        name: ScorerName.optional(),
      })
      .describe('Passes (1) when the pattern matches the output, else 0.'),
    z
      .object({
        type: z.literal('json_schema'),
        schema: z.record(z.string(), z.unknown()).describe('A JSON Schema (draft 2020-12).'),
        name: ScorerName.optional(),
      })
      .describe('Passes (1) when the output is one JSON document valid against the schema, else 0.'),
    z
      .object({
        type: z.literal('llm_judge'),
        rubric: z.string().describe('What a good answer does, for the judge: 1..4,000 characters.'),
        threshold: z.number().min(0).max(1).optional().describe('The score it passes at; default 0.5.'),
        name: ScorerName.optional(),
      })
      .describe(
        "The platform's model scores the output 0..1 by the rubric, with a reason, answering a JSON schema. The offline model scores the share of the item's expected words found in the output.",
      ),
  ])
  .meta({ id: 'Scorer', description: 'How each item\'s output is scored (decisions §16).' });

export const CreateEvalBody = z
  .object({
    dataset_id: pathId('dataset', 'ds'),
    agent_id: pathId('agent', 'agt'),
    agent_version: AgentVersionNumber.optional(),
    scorers: z.array(ScorerBody).min(1).max(10).describe('1..10 scorers.'),
    concurrency: z.int().optional().describe('How many of its runs may be queued or running at once: 1..16, default 4.'),
  })
  .meta({
    examples: [
      {
        dataset_id: 'ds_01JQ0000000000000000000000',
        agent_id: 'agt_01JQ0000000000000000000000',
        scorers: [{ type: 'contains' }, { type: 'llm_judge', rubric: 'States the refund window and does not promise exceptions.' }],
        concurrency: 4,
      },
    ],
  });

const ScorerSummary = z.object({
  name: z.string(),
  type: z.string(),
  mean: z.number().nullable().describe('Mean score over the items scored; null before the first.'),
  pass_rate: z.number().nullable().describe('Share of the items scored that passed.'),
});

export const EvalSchema = z
  .object({
    id: z.string().describe('`eval_…`'),
    dataset_id: z.string().describe('The dataset its items were copied from when it began.'),
    agent_id: z.string(),
    agent_version: z.int().describe('The version every item ran as.'),
    scorers: z.array(z.record(z.string(), z.unknown())).describe('As checked, each with its name.'),
    concurrency: z.int(),
    status: z.enum(['running', 'completed']),
    item_count: z.int(),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
    progress: z.object({ scored: z.int(), running: z.int(), pending: z.int() }),
    summary: z.object({
      passed: z.int().describe('Items whose run completed and passed every scorer.'),
      failed_runs: z.int().describe('Items whose run did not complete (failed, cancelled, waiting for an approval, or gone).'),
      duration_ms: z.object({ p50: z.int().nullable(), p95: z.int().nullable() }),
      tokens: z.int(),
      credits: z.int(),
      scorers: z.array(ScorerSummary),
    }),
  })
  .meta({ id: 'Eval', description: 'An agent run on every item of a dataset and scored (decisions §16).' });

const ScoreSchema = z.object({ name: z.string(), type: z.string(), score: z.number().describe('0..1.'), passed: z.boolean(), reason: z.string().nullable() });

export const EvalResultSchema = z
  .object({
    item_id: z.string(),
    position: z.int().describe("The item's place in the dataset when the eval began, from 0."),
    input: z.object({ message: z.string(), user_id: z.string().nullable() }),
    expected: z.string().nullable(),
    state: z.enum(['pending', 'running', 'scored']),
    run_id: z.string().nullable(),
    run_status: z.string().nullable().describe("The run's status when scored."),
    output: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why the run gave no final answer.'),
    scores: z.array(ScoreSchema),
    passed: z.boolean().nullable(),
    duration_ms: z.int().nullable(),
    tokens: z.int().nullable(),
    credits: z.int().nullable(),
  })
  .meta({ id: 'EvalResult', description: 'What one item of an eval answered and scored.' });

export const EvalListQuery = TenantQuery.extend({
  page: queryInt({ min: 1, max: 1_000_000, fallback: 1, description: 'Page, from 1.' }),
  per_page: queryInt({ min: 1, max: 100, fallback: 20, description: 'Evals per page, 1..100.' }),
  agent_id: z.string().min(1).optional().describe('Only evals of this agent.'),
  dataset_id: z.string().min(1).optional().describe('Only evals of this dataset.'),
});

export const EvalResultsQuery = TenantQuery.extend({
  limit: queryInt({ min: 1, max: 200, fallback: 50, description: 'Results per page, 1..200.' }),
  cursor: z.string().min(1).optional().describe('next_cursor of the previous page; absent for the first page.'),
});

export const EvalResultPage = z.object({
  items: z.array(EvalResultSchema),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page.'),
});

export const CompareQuery = TenantQuery.extend({
  base: pathId('eval', 'eval').describe('The eval compared against.'),
  candidate: pathId('eval', 'eval').describe('The eval compared with it: of the same dataset.'),
  page: queryInt({ min: 1, max: 1_000_000, fallback: 1, description: 'Page of items, from 1.' }),
  per_page: queryInt({ min: 1, max: 100, fallback: 50, description: 'Items per page, 1..100.' }),
});

const ScoreChangeSchema = z.object({
  name: z.string(),
  base: z.number().nullable(),
  candidate: z.number().nullable(),
  change: z.number().nullable().describe('candidate − base; null while either is not scored.'),
});

const ComparedSideSchema = z.object({ run_id: z.string().nullable(), output: z.string().nullable(), passed: z.boolean().nullable() });

export const ComparisonSchema = z
  .object({
    base: EvalSchema,
    candidate: EvalSchema,
    scorers: z.array(ScoreChangeSchema).describe("Per scorer of the base: both means and the change."),
    improved: z.int().describe('Items whose scores rose, summed over the scorers.'),
    regressed: z.int(),
    unchanged: z.int(),
    items: z.array(
      z.object({
        item_id: z.string(),
        input: z.object({ message: z.string(), user_id: z.string().nullable() }),
        expected: z.string().nullable(),
        base: ComparedSideSchema,
        candidate: ComparedSideSchema,
        scores: z.array(ScoreChangeSchema),
        changed: z.boolean(),
      }),
    ).describe('Items in both evals, changed ones first (largest change first), then in the dataset\'s order.'),
    total: z.int().describe('Items in both evals, all pages together.'),
    page: z.int(),
    per_page: z.int(),
  })
  .meta({ id: 'EvalComparison', description: 'Two evals of one dataset, item by item and scorer by scorer.' });

/** The REST eval of a gRPC answer; its absence is an upstream defect (500). */
export function evalBody(evaluation: Eval | undefined): z.output<typeof EvalSchema> {
  if (!evaluation?.summary) throw new Error('agent-memory answered without the eval.');
  const summary = evaluation.summary;
  return {
    id: evaluation.id,
    dataset_id: evaluation.datasetId,
    agent_id: evaluation.agentId,
    agent_version: evaluation.agentVersion,
    scorers: JSON.parse(evaluation.scorersJson) as Record<string, unknown>[],
    concurrency: evaluation.concurrency,
    status: evaluation.status as 'running' | 'completed',
    item_count: evaluation.itemCount,
    created_at: iso(evaluation.createdAt),
    completed_at: isoOrNull(evaluation.completedAt),
    progress: { scored: summary.scored, running: summary.running, pending: summary.pending },
    summary: {
      passed: summary.passed,
      failed_runs: summary.failedRuns,
      duration_ms: { p50: summary.durationP50Ms ?? null, p95: summary.durationP95Ms ?? null },
      tokens: Number(summary.totalTokens),
      credits: Number(summary.credits),
      scorers: summary.scorers.map((scorer) => ({ name: scorer.name, type: scorer.type, mean: scorer.mean ?? null, pass_rate: scorer.passRate ?? null })),
    },
  };
}

export function evalResultBody(result: EvalResult): z.output<typeof EvalResultSchema> {
  return {
    item_id: result.itemId,
    position: result.position,
    input: { message: result.input?.message ?? '', user_id: result.input?.userId ?? null },
    expected: result.expected ?? null,
    state: result.state as 'pending' | 'running' | 'scored',
    run_id: result.runId ?? null,
    run_status: result.runStatus ?? null,
    output: result.output ?? null,
    error: result.error ?? null,
    scores: result.scores.map((score) => ({ name: score.name, type: score.type, score: score.score, passed: score.passed, reason: score.reason ?? null })),
    passed: result.passed ?? null,
    duration_ms: result.durationMs ?? null,
    tokens: result.totalTokens === undefined ? null : Number(result.totalTokens),
    credits: result.credits === undefined ? null : Number(result.credits),
  };
}

export function scoreChangeBody(change: ScoreChange): z.output<typeof ScoreChangeSchema> {
  return { name: change.name, base: change.base ?? null, candidate: change.candidate ?? null, change: change.change ?? null };
}

export function comparedSideBody(side: ComparedSide | undefined): z.output<typeof ComparedSideSchema> {
  return { run_id: side?.runId ?? null, output: side?.output ?? null, passed: side?.passed ?? null };
}
