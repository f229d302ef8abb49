import type { RunDetail, RunStep } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { QueryState } from '../../ui/feedback.js';
import { formatDuration } from '../../ui/format.js';
import { JsonView } from '../../ui/json-view.js';
import { useAgent } from '../agents/agent-query.js';
import { useRun } from './run-query.js';

/**
 * How many runs down a chain of agents calling agents is drawn under its calls; a deeper one is
 * only linked. The platform refuses chains of more than 3 runs, so this draws every real one.
 */
const MAX_NESTED = 3;

/** The waterfall's time axis: where it starts (epoch ms) and how long it is. */
export interface Scale {
  origin: number;
  span: number;
}

const stepEnd = (step: RunStep) => Date.parse(step.started_at) + step.duration_ms;

/**
 * The run's own time, from its start: its duration, or as far as its last step reaches (memory
 * extraction is appended after the run completes; a live run has no duration yet).
 */
export function scaleOf(run: RunDetail): Scale {
  const origin = Date.parse(run.started_at);
  const end = Math.max(origin + (run.duration_ms ?? 0), ...run.steps.map(stepEnd));
  return { origin, span: Math.max(end - origin, 1) };
}

const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);

/** Where a step's bar stands on the axis, in percent of its width. */
function placement(step: RunStep, scale: Scale): { left: number; width: number } {
  const left = clamp(((Date.parse(step.started_at) - scale.origin) / scale.span) * 100, 0, 100);
  return { left, width: clamp((step.duration_ms / scale.span) * 100, 0, 100 - left) };
}

/** The run's steps, one row each, a bar to scale beside each; called agents' runs nested on the same axis. */
export function Waterfall({ run }: { run: RunDetail }) {
  return <StepList run={run} scale={scaleOf(run)} depth={0} />;
}

function StepList({ run, scale, depth }: { run: RunDetail; scale: Scale; depth: number }) {
  return (
    <ol className={depth === 0 ? 'waterfall' : `waterfall waterfall-nested depth-${depth}`} aria-label={depth === 0 ? 'Steps' : `Steps of run ${run.id}`}>
      {run.steps.map((step, index) => (
        <StepRow key={index} step={step} agentId={run.agent_id} scale={scale} depth={depth} />
      ))}
    </ol>
  );
}

function StepRow({ step, agentId, scale, depth }: { step: RunStep; agentId: string; scale: Scale; depth: number }) {
  const { left, width } = placement(step, scale);
  const offset = Math.max(0, Date.parse(step.started_at) - scale.origin);
  return (
    <li className={`step step-${step.type}`}>
      <div className="step-line">
        <div className="step-label">
          <span className="step-type">{step.type}</span> <StepTitle step={step} />
        </div>
        {/* The bar draws what the time beside it says. */}
        <div className="step-track" aria-hidden="true">
          <div className="step-bar" style={{ left: `${left}%`, width: `${width}%` }} />
        </div>
        <span className="step-time">
          +{formatDuration(offset)} · {formatDuration(step.duration_ms)}
        </span>
      </div>
      <StepDetails step={step} agentId={agentId} />
      {step.type === 'tool' && step.run_id ? <CalledRun runId={step.run_id} scale={scale} depth={depth + 1} /> : null}
    </li>
  );
}

function StepTitle({ step }: { step: RunStep }) {
  switch (step.type) {
    case 'retrieval':
      return <>Memory search: {step.items.length === 1 ? '1 memory' : `${step.items.length} memories`} found</>;
    case 'model':
      return (
        <>
          Model round {step.round}: <code>{step.model}</code>
        </>
      );
    case 'tool':
      return (
        <>
          Tool <code>{step.name}</code> <span className={`badge badge-${step.status}`}>{step.status}</span>
        </>
      );
    case 'approval':
      return (
        <>
          Approval: <span className={`badge badge-${step.decision}`}>{step.decision}</span> by <code>{step.decided_by}</code>
        </>
      );
    case 'extraction':
      return (
        <>
          Memory extraction: {step.added} added, {step.updated} updated, {step.deleted} deleted
        </>
      );
  }
}

function StepDetails({ step, agentId }: { step: RunStep; agentId: string }) {
  switch (step.type) {
    case 'retrieval':
      return (
        <div className="step-details">
          <p>
            Searched for <q>{step.query}</q>
          </p>
          {step.items.length > 0 ? (
            <ul className="step-memories" aria-label="Memories found">
              {step.items.map((item) => (
                <li key={item.memory_id}>
                  <Link to="/memory" search={{ agent_id: agentId, item: item.memory_id }}>
                    <code>{item.memory_id}</code>
                  </Link>{' '}
                  <span className="muted">score {item.score.toFixed(2)}</span>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      );
    case 'model':
      return (
        <dl className="step-details step-facts">
          <dt>Tokens</dt>
          <dd>
            {step.tokens.total.toLocaleString()} ({step.tokens.prompt.toLocaleString()} prompt, {step.tokens.completion.toLocaleString()} completion)
          </dd>
          <dt>Credits</dt>
          <dd>{step.credits}</dd>
          <dt>Finish</dt>
          <dd>{step.finish_reason === 'tool_calls' ? `asked for ${step.tool_calls.map((called) => called.name).join(', ')}` : 'stop'}</dd>
        </dl>
      );
    case 'tool':
      return (
        <div className="step-details step-json">
          <JsonView label={`Arguments of ${step.name}`} value={step.arguments} />
          {step.status === 'completed' ? <JsonView label={`Result of ${step.name}`} value={step.result} /> : <JsonView label={`Error of ${step.name}`} value={step.error} open />}
        </div>
      );
    case 'approval':
      return (
        <p className="step-details muted">
          Of call <code>{step.call_id}</code>
        </p>
      );
    case 'extraction':
      return null;
  }
}

/** The run of the agent a tool step called: linked, and drawn under the step down to MAX_NESTED. */
function CalledRun({ runId, scale, depth }: { runId: string; scale: Scale; depth: number }) {
  const link = (
    <Link to="/runs/$runId" params={{ runId }}>
      Run <code>{runId}</code>
    </Link>
  );
  if (depth > MAX_NESTED) return <p className="step-details">Called {link}</p>;
  return <NestedRun runId={runId} scale={scale} depth={depth} link={link} />;
}

function NestedRun({ runId, scale, depth, link }: { runId: string; scale: Scale; depth: number; link: ReactNode }) {
  const run = useRun(runId);
  const agent = useAgent(run.data?.agent_id);
  return (
    <div className={`step-child depth-${depth}`}>
      <p className="step-child-title">
        Called {link}
        {run.data ? (
          <>
            {' '}
            of {agent.data?.name ?? <code>{run.data.agent_id}</code>} <span className={`badge badge-${run.data.status}`}>{run.data.status}</span> {formatDuration(run.data.duration_ms)}
          </>
        ) : null}
      </p>
      <QueryState query={run} loadingLabel="Loading the called agent's run…">
        {(found) => (found.steps.length === 0 ? <p className="muted">No steps yet.</p> : <StepList run={found} scale={scale} depth={depth} />)}
      </QueryState>
    </div>
  );
}
