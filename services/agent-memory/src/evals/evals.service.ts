import { ACCESS, DomainError, FieldErrors, isId, newId, requireAccess, type Actor, type Clock, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { Credits } from '../chat/credits.js';
import type { DatasetsRepository } from '../datasets/datasets.repository.js';
import type { Eval, EvalResult } from './evals.entity.js';
import type { ComparedResult, EvalsRepository, EvalSummary } from './evals.repository.js';
import { checkScorers, needsExpected, type ScorerSpec } from './scorers.js';

/** decisions §16: how many of an eval's runs may be queued or running at once. */
export const EVAL_CONCURRENCY = { default: 4, max: 16 } as const;
/** The most items one eval runs: each is a charged turn, and an eval is answered and compared whole. */
export const EVAL_ITEMS_MAX = 5_000;

export interface EvalRequest {
  datasetId: string;
  agentId: string;
  agentVersion: number | undefined;
  /** As sent: checked here, so each fault is named where it is. */
  scorers: unknown;
  concurrency: number | undefined;
}

export interface EvalView {
  evaluation: Eval;
  summary: EvalSummary;
}

export interface ScoreChange {
  name: string;
  base: number | null;
  candidate: number | null;
  change: number | null;
}

export interface ComparedItem {
  itemId: string;
  base: ComparedResult;
  candidate: ComparedResult;
  scores: ScoreChange[];
  changed: boolean;
}

export interface Comparison {
  base: EvalView;
  candidate: EvalView;
  scorers: ScoreChange[];
  improved: number;
  regressed: number;
  unchanged: number;
  items: ComparedItem[];
  total: number;
}

export interface EvalsServiceOptions {
  em: EntityManager;
  evals: EvalsRepository;
  datasets: Pick<DatasetsRepository, 'find' | 'itemsInOrder'>;
  /** The agent as it is, or as one of its versions was (the version's own not_found). */
  agentAt(actor: Actor, agentId: string, version: number | undefined): Promise<AgentRecord>;
  credits: Pick<Credits, 'ensureAvailable'>;
  /** Queues the eval's first runs (EvalRuns.feed): after the commit that stored it. */
  feed(evalId: string): Promise<void>;
  clock: Clock;
}

/**
 * Evals of the actor's tenant (decisions §16): an agent run on a dataset's items and scored. Their
 * runs and scoring are EvalRuns' work; this is what callers ask of them.
 */
export class EvalsService {
  private readonly options: EvalsServiceOptions;

  constructor(options: EvalsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: EvalRequest, requestId: string | undefined): Promise<EvalView> {
    requireAccess(actor, ACCESS.agents.write);
    const { evals, datasets, clock } = this.options;
    const errors = new FieldErrors();
    const scorers = checkScorers(request.scorers, errors);
    const concurrency = request.concurrency ?? EVAL_CONCURRENCY.default;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > EVAL_CONCURRENCY.max) errors.add('concurrency', `must be an integer from 1 to ${EVAL_CONCURRENCY.max}`);
    errors.throwIfAny();
    if (!isId('dataset', request.datasetId) || !(await datasets.find(actor.tenantId, request.datasetId))) throw DomainError.notFound('Dataset');
    const agent = await this.options.agentAt(actor, request.agentId, request.agentVersion);
    const items = await datasets.itemsInOrder(actor.tenantId, request.datasetId, EVAL_ITEMS_MAX + 1);
    refuseItems(items, scorers);
    // Checked before anything runs, as a turn's balance is; each run is then charged as a turn.
    await this.options.credits.ensureAvailable(actor, requestId);
    const id = newId('eval');
    const stored = await this.options.em.transactional(() =>
      evals.insert(
        { id, tenantId: actor.tenantId, datasetId: request.datasetId, agentId: agent.id, agentVersion: agent.version, scorers, concurrency, actor, createdAt: new Date(clock.now()) },
        items.map((item) => ({ id: item.id, input: item.input, expected: item.expected })),
      ),
    );
    await this.options.feed(id);
    return { evaluation: stored, summary: await evals.summary(stored) };
  }

  async get(actor: Actor, id: string): Promise<EvalView> {
    requireAccess(actor, ACCESS.agents.read);
    const evaluation = await this.find(actor, id);
    return { evaluation, summary: await this.options.evals.summary(evaluation) };
  }

  async list(actor: Actor, filter: { agentId?: string; datasetId?: string }, page: Page): Promise<{ items: EvalView[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    const { items, total } = await this.options.evals.list(actor.tenantId, filter, page.perPage, page.offset);
    return { items: await Promise.all(items.map(async (evaluation) => ({ evaluation, summary: await this.options.evals.summary(evaluation) }))), total };
  }

  /** In the items' order; the cursor names the last position answered. */
  async results(actor: Actor, id: string, limit: number, cursor: string | undefined): Promise<{ items: EvalResult[]; nextCursor: string | undefined }> {
    requireAccess(actor, ACCESS.agents.read);
    const after = cursor === undefined ? -1 : positionOf(cursor);
    const evaluation = await this.find(actor, id);
    const { items, hasMore } = await this.options.evals.results(evaluation.id, limit, after);
    const last = items.at(-1);
    return { items, nextCursor: hasMore && last ? Buffer.from(`position|${last.position}`, 'utf8').toString('base64url') : undefined };
  }

  /** Two evals of one dataset, item by item: changed items first, the largest change first. */
  async compare(actor: Actor, baseId: string, candidateId: string, page: Page): Promise<Comparison> {
    requireAccess(actor, ACCESS.agents.read);
    const [base, candidate] = await Promise.all([this.get(actor, baseId), this.get(actor, candidateId)]);
    if (base.evaluation.datasetId !== candidate.evaluation.datasetId) {
      throw DomainError.validation([{ field: 'candidate', message: 'the two evals ran different datasets; only evals of one dataset compare item by item' }]);
    }
    const names = base.evaluation.scorers.map((scorer) => scorer.name);
    const compared = (await this.options.evals.pairs(base.evaluation.id, candidate.evaluation.id)).map(({ base: before, candidate: after }) => compareItem(names, before, after));
    const ranked = compared.toSorted((a, b) => Number(b.changed) - Number(a.changed) || largestChange(b) - largestChange(a) || a.base.position - b.base.position);
    const direction = compared.map((item) => Math.sign(item.scores.reduce((sum, score) => sum + (score.change ?? 0), 0)));
    const candidateMeans = new Map(candidate.summary.scorers.map((scorer) => [scorer.name, scorer.mean]));
    return {
      base,
      candidate,
      scorers: base.summary.scorers.map((scorer) => scoreChange(scorer.name, scorer.mean, candidateMeans.get(scorer.name) ?? null)),
      improved: direction.filter((sign) => sign > 0).length,
      regressed: direction.filter((sign) => sign < 0).length,
      unchanged: direction.filter((sign) => sign === 0).length,
      items: ranked.slice(page.offset, page.offset + page.perPage),
      total: ranked.length,
    };
  }

  private async find(actor: Actor, id: string): Promise<Eval> {
    const evaluation = isId('eval', id) ? await this.options.evals.find(actor.tenantId, id) : null;
    if (!evaluation) throw DomainError.notFound('Eval');
    return evaluation;
  }
}

/** The position a results cursor names; a cursor this list did not issue is a validation_error. */
function positionOf(cursor: string): number {
  const [word, position = '', ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (word !== 'position' || rest.length > 0 || !/^\d{1,9}$/.test(position)) throw DomainError.validation([{ field: 'cursor', message: 'is not a cursor this list gave' }]);
  return Number(position);
}

/** An eval needs items, not too many, and `expected` on each where a scorer compares with it. */
function refuseItems(items: readonly { expected: string | null }[], scorers: readonly ScorerSpec[]): void {
  if (items.length === 0) throw DomainError.validation([{ field: 'dataset_id', message: 'the dataset has no items; add some before evaluating on it' }]);
  if (items.length > EVAL_ITEMS_MAX) throw DomainError.validation([{ field: 'dataset_id', message: `the dataset has more than ${EVAL_ITEMS_MAX.toLocaleString('en-US')} items, the most an eval runs` }]);
  const lacking = items.filter((item) => item.expected === null).length;
  const needing = scorers.findIndex(needsExpected);
  if (lacking > 0 && needing >= 0) {
    throw DomainError.validation([{ field: `scorers[${needing}]`, message: `compares with each item's expected, and ${lacking} of the dataset's items have none; give the scorer a value of its own, or add expected to every item` }]);
  }
}

function compareItem(names: readonly string[], base: ComparedResult, candidate: ComparedResult): ComparedItem {
  const scoreOf = (result: ComparedResult, name: string) => result.scores?.find((score) => score.name === name)?.score ?? null;
  const scores = names.map((name) => scoreChange(name, scoreOf(base, name), scoreOf(candidate, name)));
  const changed = scores.some((score) => score.change !== null && score.change !== 0) || (base.passed !== null && candidate.passed !== null && base.passed !== candidate.passed);
  return { itemId: base.itemId, base, candidate, scores, changed };
}

function scoreChange(name: string, base: number | null, candidate: number | null): ScoreChange {
  return { name, base, candidate, change: base === null || candidate === null ? null : Math.round((candidate - base) * 1000) / 1000 };
}

function largestChange(item: ComparedItem): number {
  return Math.max(0, ...item.scores.map((score) => Math.abs(score.change ?? 0)));
}
