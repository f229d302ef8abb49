import { ApiResponseError, streamChat, streamToolCallDecision, type Agent, type ChatSession, type ChatStreamEvent, type MemoryItem } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useSession, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { Pager, Time } from '../../ui/page.js';
import { allTools } from './all-tools.js';
import { applyEvent, factsByTurn, historyTurns, startDecision, startTurn, withRuns, type Turn } from './chat-turns.js';
import { END_USER_EXTRACTION_HINTS, extractsFacts, learnedItems, sessionMessages, sessionRuns } from './session-reads.js';
import { TurnView } from './turn-view.js';

const route = getRouteApi('/app/agents/$agentId');
const SESSIONS_PER_PAGE = 20;
/** After a turn, what it taught the agent is looked for this often, at most this many times (extraction runs in the background). */
const FACTS_POLL_MS = 2_000;
const FACTS_POLLS = 5;

/** Refetches the agent's sessions list (after a turn, a deletion), and nothing else. */
function useRefreshSessions(agentId: string): () => void {
  const queryClient = useQueryClient();
  const { state } = useSession();
  return () => void queryClient.invalidateQueries({ queryKey: [state.tenantId, 'agent-sessions', agentId] });
}

/**
 * Chat with the agent: its sessions (newest first), one session's conversation, and turns streamed
 * as they happen. The session shown is in the URL (`session`), so it can be linked and reloaded.
 */
export function Playground({ agent }: { agent: Agent }) {
  const { session: sessionParam } = route.useSearch();
  const navigate = useNavigate();
  const [sessionsPage, setSessionsPage] = useState(1);
  const sessions = useTenantQuery(['agent-sessions', agent.id, sessionsPage], (client) =>
    call(client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agent.id }, query: { page: sessionsPage, per_page: SESSIONS_PER_PAGE } } })),
  );
  // What the conversation pane shows; a new key starts it afresh. A session the pane started itself
  // only updates the URL, so its live turns stay as they are.
  const [view, setView] = useState({ key: 0, sessionId: sessionParam });
  const shown = useRef(sessionParam);
  useEffect(() => {
    // The URL changed by itself (back, forward, the Playground tab): show what it names.
    if (sessionParam === shown.current) return;
    shown.current = sessionParam;
    setView((previous) => ({ key: previous.key + 1, sessionId: sessionParam }));
  }, [sessionParam]);

  const searchFor = (sessionId: string | undefined) => (sessionId ? { tab: 'playground' as const, session: sessionId } : { tab: 'playground' as const });
  const pick = (sessionId: string | undefined) => {
    shown.current = sessionId;
    setView((previous) => ({ key: previous.key + 1, sessionId }));
    void navigate({ to: '/agents/$agentId', params: { agentId: agent.id }, search: searchFor(sessionId) });
  };
  const started = (sessionId: string) => {
    shown.current = sessionId;
    void navigate({ to: '/agents/$agentId', params: { agentId: agent.id }, search: searchFor(sessionId), replace: true });
  };
  const sessionUser = sessions.data?.items.find((session) => session.id === view.sessionId)?.user_id ?? undefined;

  return (
    <div className="playground">
      <section className="sessions card" aria-labelledby="sessions-title">
        <div className="sessions-header">
          <h2 id="sessions-title">Sessions</h2>
          <button type="button" className="secondary" onClick={() => pick(undefined)}>
            New session
          </button>
        </div>
        <QueryState query={sessions} loadingLabel="Loading sessions…">
          {(list) =>
            list.items.length === 0 ? (
              <Empty title="No sessions yet">
                <p>Send a message to start one.</p>
              </Empty>
            ) : (
              <>
                <ul className="session-list">
                  {list.items.map((session) => (
                    <SessionItem key={session.id} agentId={agent.id} session={session} current={session.id === sessionParam} onPick={() => pick(session.id)} onDeleted={() => session.id === sessionParam && pick(undefined)} />
                  ))}
                </ul>
                <Pager page={sessionsPage} perPage={SESSIONS_PER_PAGE} total={list.total} onPage={setSessionsPage} />
              </>
            )
          }
        </QueryState>
      </section>
      <Conversation key={view.key} agent={agent} sessionId={view.sessionId} sessionUser={sessionUser} onSessionStarted={started} />
    </div>
  );
}

function SessionItem({ agentId, session, current, onPick, onDeleted }: { agentId: string; session: ChatSession; current: boolean; onPick: () => void; onDeleted: () => void }) {
  const client = useClient();
  const refreshSessions = useRefreshSessions(agentId);
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/agents/{agent_id}/sessions/{session_id}', { params: { path: { agent_id: agentId, session_id: session.id } } })),
    onSuccess: () => {
      onDeleted();
      refreshSessions();
    },
  });
  const started = new Date(session.created_at).toLocaleString();
  return (
    <li className={current ? 'session-item current' : 'session-item'}>
      <button type="button" className="session-pick" aria-current={current ? 'true' : undefined} onClick={onPick}>
        <span className="session-when">
          <Time value={session.last_message_at ?? session.created_at} />
        </span>
        <span className="session-meta">
          {session.message_count} {session.message_count === 1 ? 'message' : 'messages'}
          {session.user_id ? ` · end user ${session.user_id}` : ''}
        </span>
      </button>
      <ConfirmButton
        label="Delete"
        accessibleLabel={`Delete the session started ${started}`}
        question="Delete this session and its messages?"
        confirmLabel="Delete session"
        pending={remove.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => remove.mutate()}
      />
      <ErrorNotice error={remove.error} title="Could not delete the session" />
    </li>
  );
}

interface ConversationProps {
  agent: Agent;
  sessionId: string | undefined;
  sessionUser: string | undefined;
  onSessionStarted: (sessionId: string) => void;
}

/** A new conversation, or a stored session's history followed by the turns sent here. */
function Conversation(props: ConversationProps) {
  // A new session has taught nothing yet; an agent that does not extract never shows facts.
  if (!props.sessionId) return <Chat {...props} initialTurns={[]} initialLearned={extractsFacts(props.agent) ? [] : undefined} hiddenMessages={0} />;
  return <SessionHistory {...props} sessionId={props.sessionId} />;
}

function SessionHistory(props: ConversationProps & { sessionId: string }) {
  const { agent, sessionId } = props;
  // Read once as the session is opened: later turns are kept by the conversation itself. Not
  // cached (gcTime 0), so opening the session again reads it afresh.
  const history = useTenantQuery(
    ['session-messages', agent.id, sessionId],
    async (client) => {
      const [messages, runs, learned] = await Promise.all([sessionMessages(client, agent.id, sessionId), sessionRuns(client, agent.id, sessionId), extractsFacts(agent) ? learnedItems(client, agent.id, sessionId) : undefined]);
      return { ...messages, runs, learned };
    },
    { staleTime: Infinity, gcTime: 0, refetchOnWindowFocus: false, refetchOnReconnect: false },
  );
  return (
    <section className="conversation card" aria-labelledby="conversation-title">
      <h2 id="conversation-title">Conversation</h2>
      <QueryState query={history} loadingLabel="Loading the conversation…">
        {(loaded) => <Chat {...props} initialTurns={withRuns(historyTurns(loaded.items), loaded.runs)} initialLearned={loaded.learned} hiddenMessages={loaded.total - loaded.items.length} embedded />}
      </QueryState>
    </section>
  );
}

function Chat({
  agent,
  sessionId: initialSessionId,
  sessionUser,
  onSessionStarted,
  initialTurns,
  initialLearned,
  hiddenMessages,
  embedded = false,
}: ConversationProps & { initialTurns: Turn[]; initialLearned: MemoryItem[] | undefined; hiddenMessages: number; embedded?: boolean }) {
  const client = useClient();
  const refreshSessions = useRefreshSessions(agent.id);
  const [turns, setTurns] = useState(initialTurns);
  const [sessionId, setSessionId] = useState(initialSessionId);
  const [message, setMessage] = useState('');
  const [userId, setUserId] = useState('');
  const [sendError, setSendError] = useState<unknown>(undefined);
  const [announcement, setAnnouncement] = useState('');
  const aborter = useRef<AbortController | undefined>(undefined);
  const [learned, setLearned] = useState(initialLearned);
  const [learning, setLearning] = useState<{ error: unknown; watching: boolean }>({ error: undefined, watching: false });
  /** The current watch for facts: a newer one (or leaving) ends the older. */
  const watch = useRef(0);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      watch.current += 1;
    };
  }, []);
  const tools = useTenantQuery(['tools', 'all'], allTools, { enabled: agent.tools.length > 0 });
  const toolNames = agent.tools.map((id) => tools.data?.find((tool) => tool.id === id)?.name).filter((name): name is string => name !== undefined);
  const streaming = turns.some((turn) => turn.phase === 'streaming');
  const facts = factsByTurn(turns, learned ?? []);

  const update = (key: string, change: (turn: Turn) => Turn) => setTurns((current) => current.map((turn) => (turn.key === key ? change(turn) : turn)));

  /**
   * Reads a turn's events into it as they arrive. Resolves with what was thrown before the stream
   * began (an ApiResponseError: 402, 409, 422…), which the caller may show elsewhere too.
   */
  const run = async (key: string, events: AsyncGenerator<ChatStreamEvent>, controller: AbortController): Promise<unknown> => {
    let ended = false;
    setAnnouncement('The agent is replying…');
    try {
      for await (const event of events) {
        update(key, (turn) => applyEvent(turn, event));
        if (event.event === 'message.completed') {
          ended = true;
          const reply = event.data;
          setAnnouncement(reply.status === 'awaiting_approval' ? 'The agent waits for your approval of a tool call.' : 'The agent replied.');
          if (mounted.current && reply.session_id !== sessionId) {
            setSessionId(reply.session_id);
            onSessionStarted(reply.session_id);
          }
          if (reply.status === 'completed') watchFacts(reply.session_id, reply.created_at);
        } else if (event.event === 'error') {
          ended = true;
          setAnnouncement(`The turn failed: ${event.data.message}`);
        }
      }
      if (!ended) update(key, (turn) => ({ ...turn, phase: 'failed', error: new Error('The reply ended before it was complete.') }));
      return undefined;
    } catch (error) {
      if (controller.signal.aborted) {
        update(key, (turn) => ({ ...turn, phase: 'stopped' }));
        setAnnouncement('Stopped.');
        return undefined;
      }
      update(key, (turn) => ({ ...turn, phase: 'failed', error }));
      setAnnouncement('The turn failed.');
      return error;
    } finally {
      if (aborter.current === controller) aborter.current = undefined;
      refreshSessions();
    }
  };

  /**
   * Extraction runs a moment after a turn: the session's learned items are read again every
   * FACTS_POLL_MS until two reads agree and the turn has its facts (or, without any, after a few
   * reads), FACTS_POLLS reads at most.
   */
  const watchFacts = (session: string, turnTime: string) => {
    if (!extractsFacts(agent)) return;
    const generation = (watch.current += 1);
    const current = () => generation === watch.current;
    setLearning({ error: undefined, watching: true });
    void (async () => {
      let previous: string | undefined;
      for (let poll = 1; poll <= FACTS_POLLS; poll += 1) {
        await new Promise((resolve) => setTimeout(resolve, FACTS_POLL_MS));
        if (!current()) return;
        try {
          const items = await learnedItems(client, agent.id, session);
          if (!current()) return;
          setLearned(items);
          const signature = JSON.stringify(items.map((item) => [item.id, item.updated_at, item.content]));
          const taught = items.some((item) => Date.parse(item.updated_at ?? item.created_at) >= Date.parse(turnTime));
          if (signature === previous && (taught || poll >= 3)) break;
          previous = signature;
        } catch (error) {
          if (current()) setLearning({ error, watching: false });
          return;
        }
      }
      if (current()) setLearning({ error: undefined, watching: false });
    })();
  };

  const send = (event?: FormEvent) => {
    event?.preventDefault();
    if (streaming || message.trim() === '') return;
    const text = message;
    const turn = startTurn(text);
    setTurns((current) => [...current, turn]);
    setMessage('');
    setSendError(undefined);
    const controller = new AbortController();
    aborter.current = controller;
    const endUser = userId.trim();
    const body = { message: text, ...(sessionId ? { session_id: sessionId } : endUser ? { user_id: endUser } : {}) };
    void run(turn.key, streamChat(client, agent.id, body, { signal: controller.signal }), controller).then((error) => {
      // Refused before anything was stored (402, 409, 422…): no turn happened; the message comes
      // back to be sent again, with why above it.
      if (error instanceof ApiResponseError && mounted.current) {
        setTurns((current) => current.filter((other) => other.key !== turn.key));
        setSendError(error);
        setMessage((current) => current || text);
      }
    });
  };

  const decide = (key: string, callId: string, decision: 'approve' | 'reject', comment: string) => {
    if (!sessionId || streaming) return;
    const before = turns.find((turn) => turn.key === key);
    if (!before) return;
    setSendError(undefined);
    update(key, (turn) => startDecision(turn, callId, decision, comment || undefined));
    const controller = new AbortController();
    aborter.current = controller;
    const events = streamToolCallDecision(client, { agentId: agent.id, sessionId, callId }, decision, comment ? { comment } : {}, { signal: controller.signal });
    void run(key, events, controller).then((error) => {
      // Refused before anything ran (e.g. 409, decided elsewhere): the call is as it was, with why.
      if (error instanceof ApiResponseError) update(key, () => ({ ...before, error }));
    });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    send();
  };

  const body = (
    <>
      {embedded ? null : <h2 id="conversation-title">{sessionId ? 'Conversation' : 'New session'}</h2>}
      {hiddenMessages > 0 ? <p className="muted">The {hiddenMessages} oldest messages of this session are not shown.</p> : null}
      {turns.length === 0 ? (
        <p className="muted">{sessionId ? 'This session has no messages.' : `Say something to ${agent.name}.`}</p>
      ) : (
        <ol className="transcript" aria-label="Conversation">
          {turns.map((turn, index) => (
            <TurnView
              key={turn.key}
              turn={turn}
              facts={learned && turn.anchor ? facts.get(turn.key) : undefined}
              learning={index === turns.length - 1 ? learning : undefined}
              canDecide={!streaming && sessionId !== undefined}
              onDecide={(callId, decision, comment) => decide(turn.key, callId, decision, comment)}
            />
          ))}
        </ol>
      )}
      <p className="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>
      <form className="composer" onSubmit={send} aria-label="Send a message" noValidate>
        <ErrorNotice error={sendError} title="The message was not sent" />
        {sessionId ? (
          sessionUser ? (
            <p className="muted">
              End user of this session: <code>{sessionUser}</code>
            </p>
          ) : null
        ) : (
          <Field label="End user (optional)" field="user_id" error={sendError} hint={`The end user of your application this session is for: its turns see only their memories and the shared ones.${END_USER_EXTRACTION_HINTS[agent.memory_extraction]}`}
          >
            <input value={userId} onChange={(event) => setUserId(event.target.value)} autoComplete="off" />
          </Field>
        )}
        <Field label="Message" field="message" error={sendError} hint={<>Enter sends, Shift+Enter adds a line.{toolNames.length > 0 ? ` Tools: ${toolNames.join(', ')}.` : ''}</>}>
          <textarea value={message} onChange={(event) => setMessage(event.target.value)} onKeyDown={onKeyDown} rows={3} />
        </Field>
        {/* Send keeps its name (disabled) while the reply streams; Stop ends the stream. */}
        <FormActions submitLabel="Send" pending={streaming} cancelLabel="Stop" onCancel={streaming ? () => aborter.current?.abort() : undefined} />
      </form>
    </>
  );
  // A stored session's history already sits in its section; a new one gets its own.
  return embedded ? (
    body
  ) : (
    <section className="conversation card" aria-labelledby="conversation-title">
      {body}
    </section>
  );
}
