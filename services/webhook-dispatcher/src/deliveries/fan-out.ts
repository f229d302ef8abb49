import type { Logger } from '@agent-platform/kit';
import type { EventConsumer, EventEnvelope, TraceCarrier } from '@agent-platform/kit/events';
import { captureTraceContext, isEventType } from '@agent-platform/kit/events';
import type { DeliveryQueue, QueuedEvent } from './delivery-queue.js';

export interface FanOutOptions {
  queue: DeliveryQueue;
  retryScheduleSeconds: readonly number[];
  /** Tells this process's worker that deliveries were queued for these endpoints. */
  wake: (endpointIds: readonly string[]) => void;
  logger: Logger;
}

/** Delay before the first attempt; normally 0. Seconds. */
function firstDelay(schedule: readonly number[]): number {
  return schedule[0] ?? 0;
}

/**
 * The bus consumer's handlers: queue one delivery per subscribed active endpoint of the event's
 * tenant. Idempotent on the event id, so a redelivered event adds nothing. Resolving acknowledges
 * the event (or the run); a database failure rejects, and the bus brings it back later.
 *
 * Only catalogue types are delivered: `*` means "every type of the catalogue", and events that are
 * internal to the platform never leave it. Endpoints that are `failed` get nothing new until they
 * are enabled (decisions §8); what was queued for them before waits, in order.
 */
export function fanOutHandlers(options: FanOutOptions): Pick<EventConsumer, 'handle' | 'handleBatch'> {
  const log = options.logger.child({ component: 'fan-out' });
  const perTenant = new KeyedSerializer();
  const queue = async (events: readonly QueuedEvent[]) => {
    const queued = await options.queue.fanOut(events, options.retryScheduleSeconds.length, firstDelay(options.retryScheduleSeconds));
    if (queued.length > 0) options.wake(queued);
  };
  const queuedEvent = (envelope: EventEnvelope<object>, json: string, trace: TraceCarrier | null): QueuedEvent[] => {
    if (!isWellFormed(envelope)) {
      log.warn({ event_id: (envelope as { id?: unknown }).id }, 'dropping a malformed event envelope');
      return [];
    }
    if (!isEventType(envelope.type)) return [];
    // The event exactly as published: these characters are stored, signed and sent on every attempt.
    return [{ id: envelope.id, tenantId: envelope.tenant_id, type: envelope.type, createdAt: envelope.created_at, body: json, trace }];
  };
  return {
    async handle(envelope, delivery) {
      // The bus runs this handler in the event's trace: each attempt will continue it, however late.
      const event = queuedEvent(envelope, delivery.json, captureTraceContext());
      if (event.length === 0) return;
      // One tenant's events are queued in the order they arrive, so the worker (oldest first per
      // endpoint) cannot pick a later event before an earlier one exists; tenants run in parallel.
      await perTenant.run(envelope.tenant_id, () => queue(event));
    },
    // A run is queued by one statement: its events appear together, none before an earlier one.
    async handleBatch(events) {
      const queued = events.flatMap(({ envelope, delivery, trace }) => queuedEvent(envelope, delivery.json, trace));
      if (queued.length > 0) await queue(queued);
    },
  };
}

function isWellFormed(envelope: EventEnvelope<object>): boolean {
  const candidate = envelope as Partial<Record<keyof EventEnvelope, unknown>>;
  return (
    typeof candidate.id === 'string' &&
    candidate.id !== '' &&
    typeof candidate.type === 'string' &&
    typeof candidate.tenant_id === 'string' &&
    candidate.tenant_id !== '' &&
    typeof candidate.created_at === 'string' &&
    !Number.isNaN(Date.parse(candidate.created_at)) &&
    typeof candidate.data === 'object' &&
    candidate.data !== null
  );
}

/** Runs tasks of the same key one after another, in call order; different keys concurrently. */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    // Forget the key once nothing is queued behind this task, so the map stays small.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
