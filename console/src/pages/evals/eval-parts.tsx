import type { EvalResult } from '@agent-platform/client';

/** A score (0 to 1) to two decimals, as every eval page writes one; none is a dash. */
export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined ? '—' : score.toFixed(2);
}

/** Whether an item passed, said in words beside its mark (never by colour alone); none until it is scored. */
export function Verdict({ passed }: { passed: boolean | null }) {
  if (passed === null) return <span className="muted">not scored</span>;
  return passed ? (
    <span className="verdict verdict-pass">
      <span aria-hidden="true">✓</span> passed
    </span>
  ) : (
    <span className="verdict verdict-fail">
      <span aria-hidden="true">✗</span> failed
    </span>
  );
}

/** A change of score from one eval to another: its direction in words and by an arrow, then its size. */
export function ScoreChange({ change }: { change: number | null }) {
  if (change === null) return <span className="muted">—</span>;
  if (change === 0) return <span className="change change-none">= same</span>;
  return change > 0 ? (
    <span className="change change-up">
      <span aria-hidden="true">▲</span> up {formatScore(change)}
    </span>
  ) : (
    <span className="change change-down">
      <span aria-hidden="true">▼</span> down {formatScore(-change)}
    </span>
  );
}

/** What the agent answered an item, folded away (outputs run long), or why there is nothing to show. */
export function Output({ result, label }: { result: Pick<EvalResult, 'output'> & Partial<Pick<EvalResult, 'error' | 'state'>>; label: string }) {
  if (result.state === 'pending' || result.state === 'running') return <span className="muted">{result.state === 'pending' ? 'waiting to run' : 'running…'}</span>;
  if (result.output === null) {
    return result.error ? (
      <span className="eval-error">
        No answer: {result.error.message} <code>{result.error.code}</code>
      </span>
    ) : (
      <span className="muted">no answer</span>
    );
  }
  return (
    <details className="eval-output">
      <summary>{label}</summary>
      <p className="eval-text">{result.output}</p>
    </details>
  );
}
