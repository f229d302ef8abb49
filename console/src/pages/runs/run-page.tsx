import './runs.css';
import type { RunDetail } from '@agent-platform/client';
import { getRouteApi, Link } from '@tanstack/react-router';
import { QueryState } from '../../ui/feedback.js';
import { formatDuration } from '../../ui/format.js';
import { Page, Time } from '../../ui/page.js';
import { useAgent } from '../agents/agent-query.js';
import { RunFeedback } from './run-feedback.js';
import { isLiveRun, useRun } from './run-query.js';
import { scaleOf, Waterfall } from './waterfall.js';

const route = getRouteApi('/app/runs/$runId');

/** One run: what started it, what it cost, how it ended, and its steps to scale. */
export function RunPage() {
  const { runId } = route.useParams();
  const run = useRun(runId, { live: true });
  const agentId = run.data?.agent_id;
  const agent = useAgent(agentId);
  const agentName = agent.data?.name ?? 'Agent';
  return (
    <Page
      title={agent.data ? `Run of ${agent.data.name}` : 'Run'}
      actions={
        <button type="button" className="secondary" onClick={() => void run.refetch()} disabled={run.isFetching}>
          {run.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      }
    >
      {agentId ? (
        <p className="breadcrumbs">
          <Link to="/agents">Agents</Link> › <Link to="/agents/$agentId" params={{ agentId }} search={{}}>
            {agentName}
          </Link>{' '}
          › <Link to="/agents/$agentId" params={{ agentId }} search={{ tab: 'runs' }}>
            Runs
          </Link>
        </p>
      ) : null}
      <QueryState query={run} loadingLabel="Loading the run…">
        {(found) => (
          <>
            <RunFacts run={found} />
            <section aria-labelledby="steps-title">
              <h2 id="steps-title">Steps</h2>
              <p className="muted">
                Each bar starts and lasts to scale of the run ({formatDuration(scaleOf(found).span)} across). An agent another agent called shows its own run&apos;s steps under the call.
              </p>
              {found.steps.length === 0 ? <p className="muted">No steps yet.</p> : <Waterfall run={found} />}
            </section>
          </>
        )}
      </QueryState>
    </Page>
  );
}

function RunFacts({ run }: { run: RunDetail }) {
  return (
    <>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span className={`badge badge-${run.status}`}>{run.status}</span>
          {isLiveRun(run.status) ? <span className="muted"> · live, read again every 2 s</span> : null}
        </dd>
        <dt>Run</dt>
        <dd>
          <code>{run.id}</code>
        </dd>
        {run.parent_run_id ? (
          <>
            <dt>Called by</dt>
            <dd>
              <Link to="/runs/$runId" params={{ runId: run.parent_run_id }}>
                Parent run <code>{run.parent_run_id}</code>
              </Link>
            </dd>
          </>
        ) : null}
        <dt>Trigger</dt>
        <dd>{run.trigger}</dd>
        <dt>Version</dt>
        <dd>
          <Link to="/agents/$agentId" params={{ agentId: run.agent_id }} search={{ tab: 'versions', version: run.agent_version }}>
            Version {run.agent_version}
          </Link>
        </dd>
        <dt>End user</dt>
        <dd>{run.user_id ? <code>{run.user_id}</code> : <span className="muted">none</span>}</dd>
        <dt>Session</dt>
        <dd>
          {run.session_id ? (
            <Link to="/agents/$agentId" params={{ agentId: run.agent_id }} search={{ tab: 'playground', session: run.session_id }}>
              <code>{run.session_id}</code>
            </Link>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>Trace</dt>
        <dd>{run.trace_id ? <code>{run.trace_id}</code> : <span className="muted">not traced</span>}</dd>
        <dt>Started</dt>
        <dd>
          <Time value={run.started_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(run.duration_ms)}</dd>
        <dt>Tokens</dt>
        <dd>
          {run.usage.total_tokens.toLocaleString()} ({run.usage.prompt_tokens.toLocaleString()} prompt, {run.usage.completion_tokens.toLocaleString()} completion)
        </dd>
        <dt>Credits</dt>
        <dd>{run.credits.toLocaleString()}</dd>
        <dt>Feedback</dt>
        <dd>
          <RunFeedback runId={run.id} score={run.feedback?.score} />
        </dd>
      </dl>
      {run.error ? (
        <div className="notice notice-error">
          <strong>The run {run.status === 'cancelled' ? 'was cancelled' : 'failed'}</strong>
          <p>
            {run.error.message}
            <code className="error-code">{run.error.code}</code>
          </p>
        </div>
      ) : null}
      <div className="run-texts">
        <div>
          <h2>Input</h2>
          <p className="run-text">{run.input}</p>
        </div>
        <div>
          <h2>Output</h2>
          {run.output === null ? <p className="muted">None yet.</p> : <p className="run-text">{run.output}</p>}
        </div>
      </div>
    </>
  );
}
