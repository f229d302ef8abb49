import type { Eval, EvalResult } from '@agent-platform/client';
import type { EvalNames } from './eval-names.js';

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

/**
 * The options of agents or datasets by name; one chosen in the URL but not among them (beyond the
 * first 100, or deleted) is kept as an option by its id, so the control still says what is shown.
 */
export function NamedOptions({ chosen, choices }: { chosen: string | undefined; choices: readonly { id: string; name: string }[] | undefined }) {
  const known = chosen === undefined || choices === undefined || choices.some((choice) => choice.id === chosen);
  return (
    <>
      {known ? null : <option value={chosen}>{chosen}</option>}
      {choices?.map((choice) => (
        <option key={choice.id} value={choice.id}>
          {choice.name}
        </option>
      ))}
    </>
  );
}

/** Which agent an eval ran: its name (or id where it is not among the choices) and the version. */
export function AgentAndVersion({ evaluation, names }: { evaluation: Eval; names: EvalNames }) {
  return (
    <span>
      {names.agentName(evaluation.agent_id) ?? <code>{evaluation.agent_id}</code>} <span className="muted">version {evaluation.agent_version}</span>
    </span>
  );
}
