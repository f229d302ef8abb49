import './evals.css';
import type { Eval } from '@agent-platform/client';
import { useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { useSession } from '../../api/session-context.js';
import { QueryState } from '../../ui/feedback.js';
import { Page, Time } from '../../ui/page.js';
import { useAgent } from '../agents/agent-query.js';
import { useDataset } from '../datasets/dataset-query.js';
import { CompareWith } from './compare-with.js';
import { isRunning, useEval } from './eval-query.js';
import { EvalResults } from './eval-results.js';
import { EvalProgress, EvalSummary } from './eval-summary.js';

const route = getRouteApi('/app/evals/$evalId');

/** One eval: what ran on what, its progress while it runs, its summary, each item's result, and the way to compare it with another. */
export function EvalPage() {
  const { evalId } = route.useParams();
  const { cursor, back = [] } = route.useSearch();
  const navigate = useNavigate();
  const evaluation = useEval(evalId);
  const agent = useAgent(evaluation.data?.agent_id);
  useResultsFollowProgress(evaluation.data);
  return (
    <Page title={agent.data ? `Eval of ${agent.data.name}` : 'Eval'}>
      <p className="breadcrumbs">
        <Link to="/evals">Evals</Link>
      </p>
      <QueryState query={evaluation} loadingLabel="Loading the eval…">
        {(found) => (
          <>
            <EvalFacts evaluation={found} agentName={agent.data?.name} />
            <EvalProgress evaluation={found} />
            <EvalSummary evaluation={found} />
            <CompareWith evaluation={found} />
            <EvalResults evaluation={found} cursor={cursor} back={back} onPage={(position) => void navigate({ to: '/evals/$evalId', params: { evalId }, search: position })} />
          </>
        )}
      </QueryState>
    </Page>
  );
}

/**
 * The results shown are read again whenever the eval's progress moves (an item began or was
 * scored), rather than on a timer of their own: one request every 2 s for a running eval, not two.
 */
function useResultsFollowProgress(evaluation: Eval | undefined) {
  const queryClient = useQueryClient();
  const { state } = useSession();
  const evalId = evaluation?.id;
  const progress = evaluation ? `${evaluation.progress.scored}/${evaluation.progress.running}` : undefined;
  const seen = useRef(progress);
  useEffect(() => {
    if (progress === undefined || progress === seen.current) return;
    const moved = seen.current !== undefined;
    seen.current = progress;
    if (moved) void queryClient.invalidateQueries({ queryKey: [state.tenantId, 'evals', evalId, 'results'] });
  }, [progress, evalId, queryClient, state.tenantId]);
}

function EvalFacts({ evaluation, agentName }: { evaluation: Eval; agentName: string | undefined }) {
  const dataset = useDataset(evaluation.dataset_id);
  return (
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <span className={`badge badge-${evaluation.status}`}>{evaluation.status}</span>
      </dd>
      <dt>Agent</dt>
      <dd>
        <Link to="/agents/$agentId" params={{ agentId: evaluation.agent_id }} search={{}}>
          {agentName ?? <code>{evaluation.agent_id}</code>}
        </Link>
        , <Link to="/agents/$agentId" params={{ agentId: evaluation.agent_id }} search={{ tab: 'versions', version: evaluation.agent_version }}>
          version {evaluation.agent_version}
        </Link>
      </dd>
      <dt>Dataset</dt>
      <dd>
        {/* An eval copied its items: the dataset may have changed since, or be gone. */}
        {dataset.error ? (
          <>
            <code>{evaluation.dataset_id}</code> <span className="muted">(deleted)</span>
          </>
        ) : (
          <Link to="/datasets/$datasetId" params={{ datasetId: evaluation.dataset_id }} search={{}}>
            {dataset.data?.name ?? <code>{evaluation.dataset_id}</code>}
          </Link>
        )}
      </dd>
      <dt>Items</dt>
      <dd>{evaluation.item_count.toLocaleString()}</dd>
      <dt>Concurrency</dt>
      <dd>{evaluation.concurrency === 1 ? '1 run at a time' : `${evaluation.concurrency} runs at a time`}</dd>
      <dt>Created</dt>
      <dd>
        <Time value={evaluation.created_at} />
      </dd>
      <dt>Completed</dt>
      <dd>{isRunning(evaluation) ? <span className="muted">not yet</span> : <Time value={evaluation.completed_at} />}</dd>
    </dl>
  );
}
