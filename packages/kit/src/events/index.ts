export { EVENT_API_VERSION, eventSubject, newEvent, type EventEnvelope } from './envelope.js';
export { OUTBOX_TABLE_SQL, OutboxMessage, OutboxSchema, recordEvent } from './outbox.js';
