import { isApiError } from '@agent-platform/client';
import { useId, useState } from 'react';
import { ErrorNotice } from '../../ui/feedback.js';
import { showJson, type CallView, type Turn } from './chat-turns.js';

const STATUS_LABELS: Record<CallView['status'], string> = {
  requested: 'requested',
  awaiting_approval: 'awaiting approval',
  approved: 'approved, running',
  completed: 'completed',
  failed: 'failed',
  rejected: 'rejected',
};

/** One turn: the user's message, the agent's tool calls as they happen, its reply and what it cost. */
export function TurnView({ turn, canDecide, onDecide }: { turn: Turn; canDecide: boolean; onDecide: (callId: string, decision: 'approve' | 'reject', comment: string) => void }) {
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
      {turn.phase === 'stopped' ? <p className="turn-note">Stopped: this turn was not stored.</p> : null}
      <TurnError error={turn.error} />
      <TurnFacts turn={turn} />
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

function TurnFacts({ turn }: { turn: Turn }) {
  if (!turn.usage && !turn.model) return null;
  return (
    <dl className="turn-facts">
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
