/** The event catalogue (docs/api.md, Events): the types services emit and webhooks can subscribe to. */
export const EVENT_TYPES = [
  'agent.message.created',
  'agent.message.completed',
  'agent.tool_call.approval_requested',
  'agent.created',
  'agent.updated',
  'workflow.execution.started',
  'workflow.execution.completed',
  'workflow.execution.failed',
  'workflow.execution.waiting',
  'run.completed',
  'run.failed',
  'eval.completed',
  'memory.consolidated',
  'memory.updated',
  'document.ready',
  'document.failed',
  'billing.credits.low',
  'billing.purchase.completed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A subscription to every type of the catalogue, including types added later. */
export const ALL_EVENTS = '*';

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
