import type { Api } from './client.js';

/** One dispatched server-sent event, as a browser's EventSource would hand it over. */
export interface SseEvent {
  /** The `event:` field, or "message" when none was given. */
  type: string;
  data: string;
  lastEventId: string;
}

/**
 * The `text/event-stream` parser of the WHATWG HTML standard (§9.2.6 "Interpreting an event
 * stream"), fed text as it arrives: lines end in CRLF, LF or CR (a CRLF split across two chunks
 * included); a leading BOM is skipped; `:` lines are comments; `field: value` loses one space
 * after the colon; `data` lines join with LF; a blank line dispatches; an event without data is
 * not dispatched; what is left without its blank line when the stream ends is dropped.
 */
export class EventStreamParser {
  /** The last `retry:` value, milliseconds. */
  retry: number | undefined;
  private pending = '';
  private atStart = true;
  private skipLineFeed = false;
  private data = '';
  private eventType = '';
  private lastEventId = '';

  /** Parses a chunk; returns the events it completed. */
  feed(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.atStart && text.length > 0) {
      if (text.startsWith('\uFEFF')) text = text.slice(1);
      this.atStart = false;
    }
    if (this.skipLineFeed && text.startsWith('\n')) text = text.slice(1);
    this.skipLineFeed = false;
    this.pending += text;

    const events: SseEvent[] = [];
    let start = 0;
    for (let index = 0; index < this.pending.length; index += 1) {
      const char = this.pending[index];
      if (char !== '\r' && char !== '\n') continue;
      const event = this.line(this.pending.slice(start, index));
      if (event) events.push(event);
      if (char === '\r') {
        if (index + 1 === this.pending.length) this.skipLineFeed = true;
        else if (this.pending[index + 1] === '\n') index += 1;
      }
      start = index + 1;
    }
    this.pending = this.pending.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const { data, eventType } = this;
    this.data = '';
    this.eventType = '';
    if (data === '') return undefined;
    return { type: eventType === '' ? 'message' : eventType, data: data.slice(0, -1), lastEventId: this.lastEventId };
  }
}

/** The events of a `text/event-stream` response body as they arrive. */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new EventStreamParser();
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield* parser.feed(value);
    }
  } finally {
    // Leaving early (a test that stops reading) closes the connection.
    await reader.cancel().catch(() => undefined);
  }
}

export interface StreamedResponse {
  status: number;
  headers: Headers;
  /** Set when the answer is an event stream. */
  events: AsyncGenerator<SseEvent> | undefined;
  /** Set when it is not: the parsed JSON error (or text) body. */
  body: unknown;
}

/**
 * POSTs JSON from `api`'s client IP with a bearer credential and reads an event stream back, raw:
 * for tests of the wire itself (`streamChat` of @agent-platform/client is how callers stream).
 */
export async function postForEvents(api: Api, path: string, options: { token: string; json: unknown; signal?: AbortSignal }): Promise<StreamedResponse> {
  const response = await api.fetch(new URL(path, api.baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(options.json),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream') && response.body) {
    return { status: response.status, headers: response.headers, events: readEventStream(response.body), body: undefined };
  }
  const text = await response.text();
  return { status: response.status, headers: response.headers, events: undefined, body: type.includes('application/json') ? (JSON.parse(text) as unknown) : text };
}

/** Every event until the stream ends. */
export async function allEvents(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const collected: SseEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}
