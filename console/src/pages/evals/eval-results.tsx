import type { Eval, EvalResult } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { CursorPager, type CursorPosition } from '../../ui/cursor-pager.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { QueryState } from '../../ui/feedback.js';
import { formatScore, Output, Verdict } from './eval-parts.js';

const LIMIT = 20;
type Score = EvalResult['scores'][number];

/** Each item's result in the dataset's order, a page at a time: what it was asked, what it answered, each scorer's verdict and why, and its run. */
export function EvalResults({ evaluation, cursor, back, onPage }: CursorPosition & { evaluation: Eval; onPage: (position: CursorPosition) => void }) {
  const results = useTenantQuery(['evals', evaluation.id, 'results', cursor ?? ''], (client) =>
    call(client.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evaluation.id }, query: { limit: LIMIT, ...(cursor ? { cursor } : {}) } } })),
  );
  return (
    <section aria-labelledby="results-title">
      <h2 id="results-title">Results</h2>
      <QueryState query={results} loadingLabel="Loading the results…">
        {(list) => (
          <>
            <DataTable label="Item results" className="eval-results" columns={resultColumns(evaluation.summary.scorers.map((scorer) => scorer.name))} rows={list.items} rowKey={(result) => result.item_id} />
            <CursorPager cursor={cursor} back={back} nextCursor={list.next_cursor} onPage={onPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function resultColumns(scorerNames: readonly string[]): Column<EvalResult>[] {
  return [
    { header: '#', label: 'Item', cell: (result) => result.position + 1 },
    {
      header: 'Input',
      cell: (result) => (
        <span>
          <span className="eval-text">{result.input.message}</span>
          {result.input.user_id ? (
            <span className="muted">
              {' '}
              as <code>{result.input.user_id}</code>
            </span>
          ) : null}
        </span>
      ),
    },
    { header: 'Expected', cell: (result) => (result.expected === null ? <span className="muted">—</span> : <span className="eval-text">{result.expected}</span>) },
    { header: 'Output', cell: (result) => <Output result={result} label={`Output of item ${result.position + 1}`} /> },
    ...scorerNames.map((name): Column<EvalResult> => ({ header: name, cell: (result) => <ScoreCell score={result.scores.find((score) => score.name === name)} /> })),
    { header: 'Verdict', cell: (result) => <Verdict passed={result.passed} /> },
    {
      header: 'Run',
      cell: (result) =>
        result.run_id ? (
          <span>
            <Link to="/runs/$runId" params={{ runId: result.run_id }} aria-label={`Run of item ${result.position + 1}`}>
              Run
            </Link>
            {result.run_status && result.run_status !== 'completed' ? <span className={`badge badge-${result.run_status}`}>{result.run_status}</span> : null}
          </span>
        ) : (
          <span className="muted">—</span>
        ),
    },
  ];
}

/** A scorer's verdict on an item and its score; its reason, where it gave one, on hover and opened. */
function ScoreCell({ score }: { score: Score | undefined }) {
  if (!score) return <span className="muted">—</span>;
  // One element: a phone's stacked cell lays out each child of the cell on a row of its own.
  const verdict = (
    <span>
      <Verdict passed={score.passed} /> {formatScore(score.score)}
    </span>
  );
  if (!score.reason) return verdict;
  return (
    <details className="score-reason">
      <summary title={score.reason}>{verdict}</summary>
      <p>{score.reason}</p>
    </details>
  );
}
