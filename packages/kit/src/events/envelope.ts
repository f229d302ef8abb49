import { newId } from '../ids.js';

/** The `api_version` every event carries (decisions §8, §10). */
export const EVENT_API_VERSION = '2026-11-01';

/** The first token of every event subject; streams and consumer filters are written against it. */
export const EVENT_SUBJECT_PREFIX = 'events';

/** The event envelope of decisions §8, exactly as webhooks deliver it. */
export interface EventEnvelope<Data extends object = Record<string, unknown>> {
  /** `evt_<ULID>`; consumers de-duplicate on it. */
  id: string;
  type: string;
  /** ISO 8601 UTC with milliseconds and `Z`. */
  created_at: string;
  data: Data;
  tenant_id: string;
  api_version: typeof EVENT_API_VERSION;
}

export function newEvent<Data extends object>(type: string, tenantId: string, data: Data, now = new Date()): EventEnvelope<Data> {
  return {
    id: newId('event'),
    type,
    created_at: now.toISOString(),
    data,
    tenant_id: tenantId,
    api_version: EVENT_API_VERSION,
  };
}

/**
 * The JetStream subject of an event: `events.<tenant_id>.<type>` on stream `EVENTS`. Tests give
 * their own prefix so they can share a NATS server with the real stream.
 */
export function eventSubject(envelope: Pick<EventEnvelope, 'tenant_id' | 'type'>, prefix = EVENT_SUBJECT_PREFIX): string {
  return `${prefix}.${envelope.tenant_id}.${envelope.type}`;
}

/**
 * The envelope in `json`, or undefined when it is not one (not JSON, or a field is missing or of
 * the wrong kind). Transports receive bytes from outside the process; nothing else trusts them.
 */
export function parseEnvelope(json: string): EventEnvelope<object> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const candidate = value as Record<string, unknown>;
  const strings = ['id', 'type', 'created_at', 'tenant_id', 'api_version'] as const;
  if (!strings.every((key) => typeof candidate[key] === 'string' && candidate[key] !== '')) return undefined;
  const data = candidate.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  return value as EventEnvelope<object>;
}

/**
 * NATS subject-filter semantics: tokens split on `.`; `*` matches exactly one token, `>` (last
 * token only) matches one or more. The in-process bus must route exactly as JetStream would.
 */
export function subjectMatches(filter: string, subject: string): boolean {
  const wanted = filter.split('.');
  const tokens = subject.split('.');
  for (let i = 0; i < wanted.length; i += 1) {
    const token = wanted[i];
    if (token === '>') return i === wanted.length - 1 && tokens.length > i;
    if (i >= tokens.length) return false;
    if (token !== '*' && token !== tokens[i]) return false;
  }
  return wanted.length === tokens.length;
}
