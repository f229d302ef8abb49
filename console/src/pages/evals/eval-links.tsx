import { Link } from '@tanstack/react-router';
import type { EvalsFilter } from './evals-search.js';

/** From an agent's or a dataset's page, its evals: a new one with it already chosen, and the list of those of it. */
export function EvalLinks({ of }: { of: EvalsFilter }) {
  return (
    <>
      <Link className="button secondary" to="/evals/new" search={of}>
        New eval
      </Link>
      <Link className="button secondary" to="/evals" search={of}>
        Evals
      </Link>
    </>
  );
}
