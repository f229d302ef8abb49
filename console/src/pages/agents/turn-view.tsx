import { isApiError } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { ErrorNotice } from '../../ui/feedback.js';
import { RunFeedback } from '../runs/run-feedback.js';
import { showJson, type CallView, type LearnedFact, type Turn } from './chat-turns.js';
import { TurnCitations } from './turn-citations.js';

const STATUS_LABELS: Record<CallView['status'], string> = {
  requested: 'requested',
  awaiting_approval: 'awaiting approval',
  approved: 'approved, running',
  completed: 'completed',
  failed: 'failed',
  rejected: 'rejected',
};

/** One turn: the user's message, the agent's tool calls as they happen, its reply and what it cost. */
export function TurnView({
  turn,
  facts,
  learning,
  canDecide,
  onDecide,
}: {
  turn: Turn;
  /** What the turn taught the agent; undefined when not known (the agent does not extract). */
  facts: LearnedFact[] | undefined;
  /** The watch for the latest turn's facts: still looking, or why it could not. */
  learning: { error: unknown; watching: boolean } | undefined;
  canDecide: boolean;
  onDecide: (callId: string, decision: 'approve' | 'reject', comment: string) => void;
}) {
  const streaming = turn.phase === 'streaming';
  const waiting = streaming && turn.text === '' && !turn.calls.some((call) => call.status === 'requested' || call.status === 'approved');
  return (
    <li className="turn">
      {turn.userMessage !== undefined ? (
        <div className="bubble bubble-user">
          <span className="speaker">You</span>
          <p className="bubble-text">{turn.userMessage}</p>
        </div>
      ) : null}
      {turn.calls.length > 0 ? (
        <ol className="calls" aria-label="Tool calls">
          {turn.calls.map((call) => (
            <CallCard key={call.id} call={call} decidable={canDecide && turn.phase === 'awaiting_approval' && call.status === 'awaiting_approval'} onDecide={onDecide} />
          ))}
        </ol>
      ) : null}
      {turn.text !== '' || waiting ? (
        <div className="bubble bubble-agent" aria-busy={streaming ? true : undefined}>
          <span className="speaker">Agent</span>
          {turn.text !== '' ? <p className="bubble-text">{turn.text}</p> : <p className="muted">Thinking…</p>}
        </div>
      ) : null}
      {turn.phase === 'awaiting_approval' ? <p className="turn-note">Waiting for a decision on a tool call before it continues.</p> : null}
      {turn.phase === 'stopped' ? <p className="turn-note">Stopped before the reply was complete: open the session again to see what was stored.</p> : null}
      <TurnError error={turn.error} />
      {turn.citations ? <TurnCitations citations={turn.citations} /> : null}
      {turn.memories ? <MemoriesUsed memories={turn.memories} /> : null}
      {facts ? <FactsLearned facts={facts} learning={learning} /> : null}
      <TurnFacts turn={turn} />
      {turn.runId ? (
        <div className="turn-run">
          <Link to="/runs/$runId" params={{ runId: turn.runId }}>
            Run details
          </Link>
          {streaming ? null : <RunFeedback runId={turn.runId} score={turn.feedback} />}
        </div>
      ) : null}
    </li>
  );
}

function CallCard({ call, decidable, onDecide }: { call: CallView; decidable: boolean; onDecide: (callId: string, decision: 'approve' | 'reject', comment: string) => void }) {
  const [comment, setComment] = useState('');
  const commentId = useId();
  return (
    <li className="call">
      <div className="call-header">
        <span>
          Tool call <code>{call.name}</code>
        </span>
        <span className={`badge badge-${call.status}`}>{STATUS_LABELS[call.status]}</span>
        {call.durationMs !== null ? <span className="muted">{call.durationMs} ms</span> : null}
      </div>
      <div className="call-body">
        <div>
          <span className="call-label">Arguments</span>
          <pre>{showJson(call.arguments)}</pre>
        </div>
        {call.status === 'completed' ? (
          <div>
            <span className="call-label">Result</span>
            <pre>{showJson(call.result)}</pre>
          </div>
        ) : null}
        {call.error ? (
          <div>
            <span className="call-label">{call.status === 'rejected' ? 'Rejected' : 'Error'}</span>
            <pre className="call-error">{call.error}</pre>
          </div>
        ) : null}
        {call.comment ? (
          <p className="muted">
            Comment: <q>{call.comment}</q>
          </p>
        ) : null}
      </div>
      {decidable ? (
        <div className="call-decision">
          <label htmlFor={commentId}>Comment on {call.name} (optional)</label>
          <input id={commentId} value={comment} onChange={(event) => setComment(event.target.value)} />
          <div className="form-actions">
            <button type="button" onClick={() => onDecide(call.id, 'approve', comment.trim())}>
              Approve
            </button>
            <button type="button" className="danger" onClick={() => onDecide(call.id, 'reject', comment.trim())}>
              Reject
            </button>
          </div>
        </div>
      ) : null}
    </li>
  );
}

/** The error event's API error (not thrown, so shown here in ErrorNotice's form), or a thrown one. */
function TurnError({ error }: { error: unknown }) {
  if (!error) return null;
  if (!isApiError(error)) return <ErrorNotice error={error} title="The turn failed" />;
  return (
    <div role="alert" className="notice notice-error">
      <strong>The turn failed</strong>
      <p>
        {error.message}
        <code className="error-code">{error.error}</code>
      </p>
    </div>
  );
}

/** The memories put in the turn's context (decisions §14), most relevant first. */
function MemoriesUsed({ memories }: { memories: NonNullable<Turn['memories']> }) {
  return (
    <div className="turn-memory">
      <span className="turn-memory-title">Memories used ({memories.length})</span>
      {memories.length === 0 ? (
        <span className="muted"> none</span>
      ) : (
        <ul>
          {memories.map((memory) => (
            <li key={memory.id}>
              {memory.content} <span className="badge">{memory.memory_type}</span> <span className="muted">score {memory.score.toFixed(2)}</span>
              {memory.user_id ? <span className="muted"> · end user {memory.user_id}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** What memory extraction took from the turn: items added or changed. */
function FactsLearned({ facts, learning }: { facts: LearnedFact[]; learning: { error: unknown; watching: boolean } | undefined }) {
  return (
    <div className="turn-memory">
      <span className="turn-memory-title">Facts learned ({facts.length})</span>
      {facts.length === 0 ? <span className="muted">{learning?.watching ? ' looking for them…' : ' none'}</span> : null}
      {facts.length > 0 ? (
        <ul>
          {facts.map(({ item, change }) => (
            <li key={item.id}>
              {item.content} <span className="badge">{change}</span>
              {item.user_id ? <span className="muted"> · end user {item.user_id}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {learning?.error ? <ErrorNotice error={learning.error} title="Could not read what the turn taught" /> : null}
    </div>
  );
}

function TurnFacts({ turn }: { turn: Turn }) {
  if (!turn.usage && !turn.model) return null;
  return (
    <dl className="turn-facts">
      {turn.credits !== undefined ? (
        <>
          <dt>Credits</dt>
          <dd>{turn.credits}</dd>
        </>
      ) : null}
      {turn.usage ? (
        <>
          <dt>Tokens</dt>
          <dd>
            {turn.usage.total_tokens} ({turn.usage.prompt_tokens} prompt, {turn.usage.completion_tokens} completion)
          </dd>
        </>
      ) : null}
      {turn.model ? (
        <>
          <dt>Model</dt>
          <dd>{turn.model}</dd>
        </>
      ) : null}
    </dl>
  );
}
