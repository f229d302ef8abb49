/** One server-sent event whose data is JSON, as the gateway frames them (`event:` then one `data:` line). */
export interface SentEvent {
  event: string;
  data: unknown;
}

/**
 * The events of a whole `text/event-stream` body. Strict on purpose: every block must be exactly
 * `event: <name>\ndata: <JSON>`, and the body must end with a blank line, so framing errors fail.
 */
export function eventsOf(body: string): SentEvent[] {
  if (body === '') return [];
  if (!body.endsWith('\n\n')) throw new Error(`the stream does not end with a blank line: ${JSON.stringify(body.slice(-80))}`);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const match = /^event: ([^\n]+)\ndata: ([^\n]*)$/.exec(block);
      if (!match) throw new Error(`not an event of the gateway's framing: ${JSON.stringify(block)}`);
      return { event: match[1]!, data: JSON.parse(match[2]!) as unknown };
    });
}
