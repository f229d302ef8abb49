import type { ChatMessage, ChatSessionMessage, ChatStreamEvent, Citation, MemoryItem, Run, TokenUsage, ToolCall } from '@agent-platform/client';

/** `requested`: announced by the stream (tool.call), not yet answered by a result. */
export type CallStatus = ToolCall['status'] | 'requested';

/** One tool call of a turn as the playground shows it: from the stream's events, then the whole reply. */
export interface CallView {
  id: string;
  name: string;
  arguments: unknown;
  status: CallStatus;
  result: unknown;
  error: string | null;
  durationMs: number | null;
  comment: string | null;
}

/** One exchange: what the user said and everything the agent did about it. */
export interface Turn {
  key: string;
  /** Undefined when the turn began before the part of the session that was loaded. */
  userMessage: string | undefined;
  calls: CallView[];
  /** The reply's text: grown by message.delta while streaming, then the whole reply's. */
  text: string;
  phase: 'streaming' | 'completed' | 'awaiting_approval' | 'failed' | 'stopped';
  usage: TokenUsage | undefined;
  model: string | undefined;
  /** The error event's API error, or what was thrown (ApiResponseError before the stream began). */
  error: unknown;
  /** What the turn cost, once known: the reply's, or its stored rounds' summed. */
  credits: number | undefined;
  /** The memories the turn was given, once known (its reply's, or its stored rounds'). */
  memories: ChatMessage['memories'] | undefined;
  /** The document chunks among those memories, which the reply cites as [index]. */
  citations: Citation[] | undefined;
  /**
   * The server's first instant known of the turn (its user message's, or its reply's): memory
   * changed from then until the next turn's anchor is what this turn taught the agent.
   */
  anchor: string | undefined;
  /** The run the turn is (decisions §16): named by every event of a live turn, and by a stored one's messages. */
  runId: string | undefined;
  /** The run's feedback score as read with the session; what is given later, its buttons keep. */
  feedback: number | undefined;
}

let turnCount = 0;

export function startTurn(userMessage: string): Turn {
  turnCount += 1;
  return { key: `live-${turnCount}`, userMessage, calls: [], text: '', phase: 'streaming', usage: undefined, model: undefined, error: undefined, credits: undefined, memories: undefined, citations: undefined, anchor: undefined, runId: undefined, feedback: undefined };
}

/** The turn after one streamed event. */
export function applyEvent(before: Turn, event: ChatStreamEvent): Turn {
  const turn = event.event === 'error' ? before : { ...before, runId: event.data.run_id };
  switch (event.event) {
    case 'tool.call': {
      const call: CallView = { id: event.data.id, name: event.data.name, arguments: event.data.arguments, status: 'requested', result: null, error: null, durationMs: null, comment: null };
      return { ...turn, calls: [...turn.calls.filter((known) => known.id !== call.id), call] };
    }
    case 'tool.result': {
      const result = event.data;
      return {
        ...turn,
        calls: turn.calls.map((call) =>
          call.id !== result.id ? call : result.status === 'completed' ? { ...call, status: 'completed', result: result.result, error: null } : { ...call, status: result.status, error: result.error },
        ),
      };
    }
    case 'message.delta':
      return { ...turn, text: turn.text + event.data.content };
    case 'message.completed':
      return completeTurn(turn, event.data);
    case 'error':
      return { ...turn, phase: 'failed', error: event.data };
  }
}

function completeTurn(turn: Turn, reply: ChatMessage): Turn {
  return {
    ...turn,
    calls: reply.tool_calls.map(callView),
    text: reply.content,
    phase: reply.status,
    usage: reply.usage,
    model: reply.model,
    error: undefined,
    credits: reply.credits,
    memories: reply.memories,
    citations: reply.citations,
    anchor: turn.anchor ?? reply.created_at,
  };
}

/** A decision was sent: the call runs (approved) or is about to be reported rejected; the turn streams again. */
export function startDecision(turn: Turn, callId: string, decision: 'approve' | 'reject', comment: string | undefined): Turn {
  return {
    ...turn,
    phase: 'streaming',
    error: undefined,
    // The reply so far is replaced by the continued turn's.
    text: '',
    calls: turn.calls.map((call) => (call.id === callId ? { ...call, status: decision === 'approve' ? 'approved' : call.status, comment: comment ?? null } : call)),
  };
}

export function callView(call: ToolCall): CallView {
  return { id: call.id, name: call.name, arguments: call.arguments, status: call.status, result: call.result, error: call.error, durationMs: call.duration_ms, comment: call.comment };
}

/**
 * A session's stored messages (oldest first) as turns: a user message opens a turn; the assistant
 * messages after it carry its calls (with their current status and result) and its reply.
 */
export function historyTurns(messages: readonly ChatSessionMessage[]): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  const open = (message: ChatSessionMessage, userMessage: string | undefined): Turn => {
    const turn: Turn = {
      key: message.id,
      userMessage,
      calls: [],
      text: '',
      phase: 'completed',
      usage: undefined,
      model: undefined,
      error: undefined,
      credits: undefined,
      memories: undefined,
      citations: undefined,
      anchor: message.created_at,
      runId: message.run_id ?? undefined,
      feedback: undefined,
    };
    turns.push(turn);
    return turn;
  };
  for (const message of messages) {
    if (message.role === 'user') {
      current = open(message, message.content);
      continue;
    }
    current ??= open(message, undefined);
    if (message.role === 'assistant') {
      for (const call of message.tool_calls) current.calls.push(callView(call));
      if (message.content) current.text = message.content;
      if (message.status === 'awaiting_approval') current.phase = 'awaiting_approval';
      if (message.usage) current.usage = addUsage(current.usage, message.usage);
      // As the live turn showed them: the last round's model, every round's credits, the memories given and the chunks among them.
      if (message.model !== null) current.model = message.model;
      if (message.credits !== null) current.credits = (current.credits ?? 0) + message.credits;
      current.memories = message.memories;
      current.citations = message.citations;
    }
  }
  // A turn is awaiting while any of its calls still is (an earlier assistant message may be).
  for (const turn of turns) if (turn.calls.some((call) => call.status === 'awaiting_approval')) turn.phase = 'awaiting_approval';
  return turns;
}

/**
 * A stored session's turns with their runs' feedback (GET /agents/{agent_id}/runs?session_id=):
 * each stored message names its turn's run; a run past RUN_RETENTION_DAYS is gone, and so is what
 * it was given.
 */
export function withRuns(turns: readonly Turn[], runs: readonly Run[]): Turn[] {
  const byId = new Map(runs.map((run) => [run.id, run]));
  return turns.map((turn) => {
    const run = turn.runId === undefined ? undefined : byId.get(turn.runId);
    return run ? { ...turn, feedback: run.feedback?.score } : turn;
  });
}

function addUsage(total: TokenUsage | undefined, more: TokenUsage): TokenUsage {
  if (!total) return { ...more };
  return { prompt_tokens: total.prompt_tokens + more.prompt_tokens, completion_tokens: total.completion_tokens + more.completion_tokens, total_tokens: total.total_tokens + more.total_tokens };
}

/** A memory item a turn's extraction wrote: added by it, or changed by it. */
export interface LearnedFact {
  item: MemoryItem;
  change: 'added' | 'updated';
}

/**
 * The session's learned items (GET /memory?session_id) shared out among its turns by when they
 * changed: each goes to the last turn anchored at or before its latest change.
 */
export function factsByTurn(turns: readonly Turn[], items: readonly MemoryItem[]): Map<string, LearnedFact[]> {
  const anchored = turns.filter((turn): turn is Turn & { anchor: string } => turn.anchor !== undefined).map((turn) => ({ key: turn.key, at: Date.parse(turn.anchor) }));
  const facts = new Map<string, LearnedFact[]>(anchored.map((turn) => [turn.key, []]));
  for (const item of items) {
    const changedAt = Date.parse(item.updated_at ?? item.created_at);
    const owner = anchored.findLast((turn) => turn.at <= changedAt);
    if (!owner) continue;
    const change = Date.parse(item.created_at) >= owner.at ? 'added' : 'updated';
    facts.get(owner.key)?.push({ item, change });
  }
  return facts;
}

/** JSON for reading: strings as they are, anything else indented. */
export function showJson(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}
