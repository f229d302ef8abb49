export type { ConsumedEvent, Delivery, EventBus, EventConsumer, OutgoingEvent, RetryBackoff, Subscription } from './bus.js';
export {
  EVENT_API_VERSION,
  EVENT_SUBJECT_PREFIX,
  eventSubject,
  newEvent,
  parseEnvelope,
  subjectMatches,
  type EventEnvelope,
} from './envelope.js';
export { InProcessEventBus, type InProcessEventBusOptions } from './in-process-bus.js';
export { NatsEventBus, type NatsEventBusOptions } from './nats-bus.js';
export {
  OUTBOX_NOTIFY_CHANNEL,
  OUTBOX_NOTIFY_SQL,
  OUTBOX_TABLE_SQL,
  OutboxMessage,
  OutboxSchema,
  recordEvent,
} from './outbox.js';
export { OutboxRelay, type OutboxRelayOptions } from './outbox-relay.js';
export { captureTraceContext, consumeInTraceContext, parseTraceCarrier, restoreTraceContext, type TraceCarrier } from './trace-context.js';
export { ALL_EVENTS, EVENT_TYPES, isEventType, type EventType } from './catalogue.js';
