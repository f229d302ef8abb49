import type { Eval } from '@agent-platform/client';
import { DataTable } from '../../ui/data-table.js';
import { Figures } from '../../ui/figures.js';
import { formatDuration, formatPercent } from '../../ui/format.js';
import { JsonView } from '../../ui/json-view.js';
import { formatScore } from './eval-parts.js';
import { isRunning } from './eval-query.js';

type ScorerSummary = Eval['summary']['scorers'][number];

/** How far the eval is: items scored, running and waiting, drawn to scale and said in words. */
export function EvalProgress({ evaluation }: { evaluation: Eval }) {
  const { scored, running, pending } = evaluation.progress;
  const total = evaluation.item_count;
  const width = (count: number) => `${(count / Math.max(total, 1)) * 100}%`;
  return (
    <section className="eval-progress" aria-labelledby="progress-title">
      <h2 id="progress-title">Progress</h2>
      <div className="progress-track" role="progressbar" aria-labelledby="progress-title" aria-valuemin={0} aria-valuemax={total} aria-valuenow={scored} aria-valuetext={`${scored.toLocaleString()} of ${total.toLocaleString()} items scored`}>
        <div className="progress-scored" style={{ width: width(scored) }} />
        <div className="progress-running" style={{ width: width(running) }} />
      </div>
      <ul className="progress-legend">
        <li>
          <span className="swatch swatch-scored" aria-hidden="true" /> {scored.toLocaleString()} scored
        </li>
        <li>
          <span className="swatch swatch-running" aria-hidden="true" /> {running.toLocaleString()} running
        </li>
        <li>
          <span className="swatch swatch-pending" aria-hidden="true" /> {pending.toLocaleString()} pending
        </li>
        <li className="muted">of {total === 1 ? '1 item' : `${total.toLocaleString()} items`}</li>
      </ul>
      {isRunning(evaluation) ? <p className="muted">Live: read again every 2 s until every item is scored.</p> : null}
    </section>
  );
}

/** What the items scored so far add up to: passes, failed runs, time, cost, and each scorer's mean and pass rate. */
export function EvalSummary({ evaluation }: { evaluation: Eval }) {
  const { summary } = evaluation;
  return (
    <section className="eval-summary" aria-labelledby="summary-title">
      <h2 id="summary-title">Summary</h2>
      {isRunning(evaluation) ? <p className="muted">Of the items scored so far.</p> : null}
      <Figures
        className="card"
        figures={[
          ['Passed', `${summary.passed.toLocaleString()} of ${evaluation.item_count.toLocaleString()}`],
          ['Failed runs', summary.failed_runs.toLocaleString()],
          // The exact milliseconds stay readable by machines (and the tests) beside the rounded text.
          ['p50 duration', <data value={summary.duration_ms.p50 ?? ''}>{formatDuration(summary.duration_ms.p50)}</data>],
          ['p95 duration', <data value={summary.duration_ms.p95 ?? ''}>{formatDuration(summary.duration_ms.p95)}</data>],
          ['Tokens', summary.tokens.toLocaleString()],
          ['Credits', summary.credits.toLocaleString()],
        ]}
      />
      <DataTable
        label="Scorers"
        columns={[
          { header: 'Scorer', cell: (scorer: ScorerSummary) => scorer.name },
          { header: 'Type', cell: (scorer: ScorerSummary) => <code>{scorer.type}</code> },
          { header: 'Mean score', cell: (scorer: ScorerSummary) => formatScore(scorer.mean) },
          { header: 'Pass rate', cell: (scorer: ScorerSummary) => formatPercent(scorer.pass_rate) },
        ]}
        rows={summary.scorers}
        rowKey={(scorer) => scorer.name}
      />
      <JsonView label="Scorer settings" value={evaluation.scorers} />
    </section>
  );
}
