import './evals.css';
import type { Eval, EvalComparison } from '@agent-platform/client';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { LIVE_INTERVAL_MS } from '../../api/live.js';
import { useTenantQuery } from '../../api/session-context.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { Empty, QueryState } from '../../ui/feedback.js';
import { Figures } from '../../ui/figures.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { AgentAndVersion, formatScore, Output, ScoreChange, Verdict } from './eval-parts.js';
import { useEvalNames, type EvalNames } from './eval-names.js';
import { isRunning } from './eval-query.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/evals/compare');
type ComparedItem = EvalComparison['items'][number];
type ComparedScore = EvalComparison['scorers'][number];

/** Two evals of one dataset side by side: each scorer's mean and its change, how many items improved or regressed, and the items that changed first. */
export function ComparePage() {
  const { base, candidate, page = 1 } = route.useSearch();
  return (
    <Page
      title="Compare evals"
      actions={
        base && candidate ? (
          <Link className="button secondary" to="/evals/compare" search={{ base: candidate, candidate: base }}>
            Swap base and candidate
          </Link>
        ) : null
      }
    >
      <p className="breadcrumbs">
        <Link to="/evals">Evals</Link>
      </p>
      {base && candidate ? (
        <Comparison base={base} candidate={candidate} page={page} />
      ) : (
        <Empty title="Two evals to compare">
          <p>
            Open an eval from the <Link to="/evals">list</Link> and pick another of the same dataset to compare it with.
          </p>
        </Empty>
      )}
    </Page>
  );
}

function Comparison({ base, candidate, page }: { base: string; candidate: string; page: number }) {
  const navigate = useNavigate();
  const names = useEvalNames();
  // While either eval runs, its scores (and so the changes) still move.
  const comparison = useTenantQuery(
    ['evals', 'compare', base, candidate, page],
    (client) => call(client.GET('/api/v1/evals/compare', { params: { query: { base, candidate, page, per_page: PER_PAGE } } })),
    { refetchInterval: (query) => (isRunning(query.state.data?.base) || isRunning(query.state.data?.candidate) ? LIVE_INTERVAL_MS : false) },
  );
  return (
    <QueryState query={comparison} loadingLabel="Comparing…">
      {(compared) => (
        <>
          <div className="compared-evals">
            <ComparedEval role="Base" evaluation={compared.base} names={names} />
            <ComparedEval role="Candidate" evaluation={compared.candidate} names={names} />
          </div>
          <section aria-labelledby="changes-title">
            <h2 id="changes-title">Changes</h2>
            <p className="muted">An item improved or regressed when its scores, summed over the base&apos;s scorers, rose or fell.</p>
            <Figures
              className="card"
              figures={[
                ['Improved', <Direction sign={1} count={compared.improved} />],
                ['Regressed', <Direction sign={-1} count={compared.regressed} />],
                ['Unchanged', <Direction sign={0} count={compared.unchanged} />],
              ]}
            />
            <DataTable label="Scorers compared" columns={SCORER_COLUMNS} rows={compared.scorers} rowKey={(scorer) => scorer.name} />
          </section>
          <section aria-labelledby="items-title">
            <h2 id="items-title">Items, changed first</h2>
            <DataTable label="Items compared" columns={ITEM_COLUMNS} rows={compared.items} rowKey={(item) => item.item_id} />
            <Pager page={page} perPage={PER_PAGE} total={compared.total} onPage={(next) => void navigate({ to: '/evals/compare', search: { base, candidate, page: next } })} />
          </section>
        </>
      )}
    </QueryState>
  );
}

function ComparedEval({ role, evaluation, names }: { role: string; evaluation: Eval; names: EvalNames }) {
  return (
    <section className="card" aria-label={role}>
      <h2>
        {role}:{' '}
        <Link to="/evals/$evalId" params={{ evalId: evaluation.id }} search={{}}>
          eval of <Time value={evaluation.created_at} />
        </Link>
      </h2>
      <p>
        <AgentAndVersion evaluation={evaluation} names={names} /> <span className={`badge badge-${evaluation.status}`}>{evaluation.status}</span>
      </p>
      <p className="muted">Scorers: {evaluation.summary.scorers.map((scorer) => scorer.name).join(', ')}</p>
    </section>
  );
}

/** A count of items that went one way, the way said by an arrow and in the figure's name. */
function Direction({ sign, count }: { sign: number; count: number }) {
  return (
    <span className={sign > 0 ? 'change change-up' : sign < 0 ? 'change change-down' : 'change change-none'}>
      <span aria-hidden="true">{sign > 0 ? '▲ ' : sign < 0 ? '▼ ' : '= '}</span>
      {count.toLocaleString()}
    </span>
  );
}

const SCORER_COLUMNS: Column<ComparedScore>[] = [
  { header: 'Scorer', cell: (scorer) => scorer.name },
  { header: 'Base mean', cell: (scorer) => formatScore(scorer.base) },
  { header: 'Candidate mean', cell: (scorer) => (scorer.candidate === null ? <span className="muted">— (not scored by it)</span> : formatScore(scorer.candidate)) },
  { header: 'Change', cell: (scorer) => <ScoreChange change={scorer.change} /> },
];

const ITEM_COLUMNS: Column<ComparedItem>[] = [
  { header: 'Input', cell: (item) => <span className="eval-text">{item.input.message}</span> },
  { header: 'Expected', cell: (item) => (item.expected === null ? <span className="muted">—</span> : <span className="eval-text">{item.expected}</span>) },
  { header: 'Change', cell: (item) => <ItemChange item={item} /> },
  { header: 'Base', cell: (item) => <ComparedSide side={item.base} name="Base" /> },
  { header: 'Candidate', cell: (item) => <ComparedSide side={item.candidate} name="Candidate" /> },
  {
    header: 'Scores',
    cell: (item) => (
      <ul className="compared-scores">
        {item.scores.map((score) => (
          <li key={score.name}>
            {score.name}: {fromTo(score)}
            {score.change === null ? null : (
              <>
                {' '}
                <ScoreChange change={score.change} />
              </>
            )}
          </li>
        ))}
      </ul>
    ),
  },
];

/** An item's score in the base, then in the candidate; a scorer only one of them has says so. */
function fromTo(score: ComparedScore): string {
  if (score.candidate === null) return `${formatScore(score.base)}, not scored by the candidate`;
  if (score.base === null) return `not scored by the base, ${formatScore(score.candidate)}`;
  return `${formatScore(score.base)} → ${formatScore(score.candidate)}`;
}

/** Which way an item went, as the API counts it: the sign of its scores' changes summed. */
function ItemChange({ item }: { item: ComparedItem }) {
  const sum = item.scores.reduce((total, score) => total + (score.change ?? 0), 0);
  if (sum > 0) {
    return (
      <span className="change change-up">
        <span aria-hidden="true">▲</span> improved
      </span>
    );
  }
  if (sum < 0) {
    return (
      <span className="change change-down">
        <span aria-hidden="true">▼</span> regressed
      </span>
    );
  }
  return <span className="change change-none">{item.changed ? '= changed, no net change' : '= unchanged'}</span>;
}

function ComparedSide({ side, name }: { side: ComparedItem['base']; name: string }) {
  return (
    <div className="compared-side">
      <Verdict passed={side.passed} />
      <Output result={side} label={`${name} output`} />
      {side.run_id ? (
        <Link to="/runs/$runId" params={{ runId: side.run_id }}>
          {name} run
        </Link>
      ) : null}
    </div>
  );
}
