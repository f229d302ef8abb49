import type { Eval } from '@agent-platform/client';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { Field } from '../../ui/form.js';
import { QueryState } from '../../ui/feedback.js';
import { useEvalNames } from './eval-names.js';
import { useEvalList } from './eval-query.js';

/** The evals of a dataset offered to compare with: one page of the most the API gives, newest first. */
const COMPARE_CHOICES = 100;

/**
 * Picks another eval of the same dataset (only those compare item by item) and opens the
 * comparison, the older of the two as the base: what changed since, up or down.
 */
export function CompareWith({ evaluation }: { evaluation: Eval }) {
  const navigate = useNavigate();
  const names = useEvalNames();
  const evals = useEvalList({ dataset_id: evaluation.dataset_id }, 1, COMPARE_CHOICES);
  const [chosen, setChosen] = useState('');
  return (
    <section aria-labelledby="compare-title">
      <h2 id="compare-title">Compare</h2>
      <QueryState query={evals} loadingLabel="Loading the other evals of this dataset…">
        {(list) => {
          const others = list.items.filter((other) => other.id !== evaluation.id);
          if (others.length === 0) {
            return (
              <p className="muted">
                No other eval of this dataset yet.{' '}
                <Link to="/evals/new" search={{ dataset_id: evaluation.dataset_id }}>
                  Start another
                </Link>{' '}
                (another version of the agent, another agent, other scorers) to compare them item by item.
              </p>
            );
          }
          const selected = others.find((other) => other.id === chosen) ?? others[0]!;
          const submit = (event: FormEvent<HTMLFormElement>) => {
            event.preventDefault();
            const [base, candidate] = Date.parse(selected.created_at) <= Date.parse(evaluation.created_at) ? [selected, evaluation] : [evaluation, selected];
            void navigate({ to: '/evals/compare', search: { base: base.id, candidate: candidate.id } });
          };
          return (
            <form className="compare-with" onSubmit={submit} aria-label="Compare with another eval">
              <Field label="Another eval of this dataset" hint="The older of the two is the base: the comparison says what changed since.">
                <select value={selected.id} onChange={(event) => setChosen(event.target.value)}>
                  {others.map((other) => (
                    <option key={other.id} value={other.id}>
                      {names.agentName(other.agent_id) ?? other.agent_id} version {other.agent_version}, {new Date(other.created_at).toLocaleString()} ({other.summary.scorers.map((scorer) => scorer.name).join(', ')})
                    </option>
                  ))}
                </select>
              </Field>
              <div className="form-actions">
                <button type="submit">Compare</button>
              </div>
            </form>
          );
        }}
      </QueryState>
    </section>
  );
}
