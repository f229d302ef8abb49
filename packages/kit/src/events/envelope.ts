import { newId } from '../ids.js';

/** The `api_version` every event carries (decisions §8, §10). */
export const EVENT_API_VERSION = '2026-11-01';

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

/** The JetStream subject of an event: `events.<tenant_id>.<type>` on stream `EVENTS`. */
export function eventSubject(envelope: Pick<EventEnvelope, 'tenant_id' | 'type'>): string {
  return `events.${envelope.tenant_id}.${envelope.type}`;
}
