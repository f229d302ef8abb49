import { DomainError, parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { ComparedSide, EvalResult as EvalResultMessage, Eval as EvalMessage, EvalServiceService, ScoreChange as ScoreChangeMessage } from '@agent-platform/proto/agents/v1/evals';
import type { EvalResult } from './evals.entity.js';
import type { ComparedResult } from './evals.repository.js';
import type { EvalsService, EvalView, ScoreChange } from './evals.service.js';

export const EVAL_SERVICE_NAME = 'agentplatform.agents.v1.EvalService';

/** Results a page holds when the caller names no limit, and at most. */
const RESULTS_PAGE = { default: 50, max: 200 } as const;

/** EvalService: translation only; EvalsService decides. */
export function evalHandlers(evals: EvalsService): Handlers<typeof EvalServiceService> {
  return {
    createEval: async (request, ctx) => {
      const created = await evals.create(
        actorOf(ctx),
        { datasetId: request.datasetId, agentId: request.agentId, agentVersion: request.agentVersion, scorers: scorersOf(request.scorersJson), concurrency: request.concurrency },
        ctx.requestId,
      );
      return { eval: toMessage(created) };
    },

    getEval: async (request, ctx) => ({ eval: toMessage(await evals.get(actorOf(ctx), request.evalId)) }),

    listEvals: async (request, ctx) => {
      const { items, total } = await evals.list(actorOf(ctx), { agentId: present(request.agentId), datasetId: present(request.datasetId) }, parsePage(request.page));
      return { evals: items.map(toMessage), total };
    },

    listEvalResults: async (request, ctx) => {
      const limit = request.page?.limit || RESULTS_PAGE.default;
      if (limit < 1 || limit > RESULTS_PAGE.max) throw DomainError.validation([{ field: 'limit', message: `must be from 1 to ${RESULTS_PAGE.max}` }]);
      const page = await evals.results(actorOf(ctx), request.evalId, limit, present(request.page?.cursor));
      return { results: page.items.map(toResultMessage), nextCursor: page.nextCursor };
    },

    compareEvals: async (request, ctx) => {
      const comparison = await evals.compare(actorOf(ctx), request.baseEvalId, request.candidateEvalId, parsePage(request.page));
      return {
        base: toMessage(comparison.base),
        candidate: toMessage(comparison.candidate),
        scorers: comparison.scorers.map(toChangeMessage),
        improved: comparison.improved,
        regressed: comparison.regressed,
        unchanged: comparison.unchanged,
        items: comparison.items.map((item) => ({
          itemId: item.itemId,
          input: { message: item.base.input.message, userId: item.base.input.user_id },
          expected: item.base.expected ?? undefined,
          base: sideOf(item.base),
          candidate: sideOf(item.candidate),
          scores: item.scores.map(toChangeMessage),
          changed: item.changed,
        })),
        total: comparison.total,
      };
    },
  };
}

/** The scorers as JSON text: text that is not JSON is a fault of `scorers`, named as such. */
function scorersOf(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw DomainError.validation([{ field: 'scorers', message: 'must be a JSON array of scorers' }]);
  }
}

function toMessage({ evaluation, summary }: EvalView): EvalMessage {
  return {
    id: evaluation.id,
    datasetId: evaluation.datasetId,
    agentId: evaluation.agentId,
    agentVersion: evaluation.agentVersion,
    scorersJson: JSON.stringify(evaluation.scorers),
    concurrency: evaluation.concurrency,
    status: evaluation.status,
    itemCount: evaluation.itemCount,
    createdAt: evaluation.createdAt,
    completedAt: evaluation.completedAt ?? undefined,
    summary: {
      scored: summary.scored,
      running: summary.running,
      pending: summary.pending,
      passed: summary.passed,
      failedRuns: summary.failedRuns,
      durationP50Ms: summary.durationP50Ms ?? undefined,
      durationP95Ms: summary.durationP95Ms ?? undefined,
      totalTokens: summary.totalTokens,
      credits: summary.credits,
      scorers: summary.scorers.map((scorer) => ({ name: scorer.name, type: scorer.type, mean: scorer.mean ?? undefined, passRate: scorer.passRate ?? undefined })),
    },
  };
}

function toResultMessage(result: EvalResult): EvalResultMessage {
  return {
    itemId: result.itemId,
    position: result.position,
    input: { message: result.input.message, userId: result.input.user_id },
    expected: result.expected ?? undefined,
    // Being scored is a moment of running: callers see three states.
    state: result.state === 'scoring' ? 'running' : result.state,
    runId: result.runId ?? undefined,
    runStatus: result.runStatus ?? undefined,
    output: result.output ?? undefined,
    error: result.error ?? undefined,
    scores: (result.scores ?? []).map((score) => ({ ...score, reason: score.reason ?? undefined })),
    passed: result.passed ?? undefined,
    durationMs: result.durationMs ?? undefined,
    totalTokens: result.totalTokens ?? undefined,
    credits: result.credits ?? undefined,
  };
}

function sideOf(result: ComparedResult): ComparedSide {
  return { runId: result.runId ?? undefined, output: result.output ?? undefined, passed: result.passed ?? undefined };
}

function toChangeMessage(change: ScoreChange): ScoreChangeMessage {
  return { name: change.name, base: change.base ?? undefined, candidate: change.candidate ?? undefined, change: change.change ?? undefined };
}
