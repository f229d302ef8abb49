import { systemClock, type Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus, EventConsumer, RetryBackoff, Subscription } from './bus.js';
import { EVENT_SUBJECT_PREFIX, eventSubject, subjectMatches, type EventEnvelope } from './envelope.js';
import { backoffDelay, settlesWithin, Slots } from './timing.js';
import { consumeInTraceContext, type TraceCarrier } from './trace-context.js';

export interface InProcessEventBusOptions {
  /**
   * Durable names of every consumer this process will run. A publish waits for each of them, so
   * the outbox row stays unpublished until every consumer has the event, even one that has not
   * subscribed yet (or is restarting).
   */
  consumers: readonly string[];
  logger: Logger;
  /** Default `events`; see eventSubject. */
  subjectPrefix?: string;
  /** How long a publish waits for a declared consumer to subscribe; default 10,000 ms. */
  subscribeTimeoutMs?: number;
  /** Back-off between attempts of a failing handler; default 1 s doubling to 60 s. */
  retry?: RetryBackoff;
  /** How long one publish keeps retrying a failing handler before it rejects; default 120,000 ms. */
  deliveryTimeoutMs?: number;
  /** How long an event id is remembered per consumer, so a re-publish is not handled twice; default 120,000 ms. */
  dedupWindowMs?: number;
  /** Bound on waiting for handlers in flight at stop and close; default 10,000 ms. */
  stopTimeoutMs?: number;
  /** Measures every bound, back-off and window above; default the system's. */
  clock?: Clock;
}

interface Active {
  consumer: EventConsumer;
  slots: Slots;
}

/**
 * The EventBus of the local all-in-one mode: `publish` runs every matching declared consumer's
 * handler and resolves only once all of them succeeded, so the relay stamps the outbox row only
 * then and re-publishes it after a crash. Like JetStream it de-duplicates a re-published event id
 * (per consumer, within a window) and redelivers after a handler failure with back-off.
 */
export class InProcessEventBus implements EventBus {
  readonly system = 'in-process';
  private readonly declared: ReadonlySet<string>;
  private readonly active = new Map<string, Active>();
  private readonly subscribed = new Map<string, (() => void)[]>();
  private readonly handled = new Map<string, { at: number; consumers: Set<string> }>();
  private readonly publishing = new Map<string, Promise<void>>();
  private readonly closing = new AbortController();
  private readonly prefix: string;
  private readonly retry: RetryBackoff;
  private readonly clock: Clock;

  constructor(private readonly options: InProcessEventBusOptions) {
    this.declared = new Set(options.consumers);
    this.prefix = options.subjectPrefix ?? EVENT_SUBJECT_PREFIX;
    this.retry = options.retry ?? { initialMs: 1_000, maxMs: 60_000 };
    this.clock = options.clock ?? systemClock;
  }

  publish(envelope: EventEnvelope<object>, json = JSON.stringify(envelope), trace: TraceCarrier | null = null): Promise<void> {
    if (this.closing.signal.aborted) return Promise.reject(new Error('The event bus is closed.'));
    // A concurrent publish of the same id joins the first instead of running handlers twice.
    const running = this.publishing.get(envelope.id);
    if (running) return running;
    const publication = this.deliverToAll(envelope, json, trace).finally(() => this.publishing.delete(envelope.id));
    this.publishing.set(envelope.id, publication);
    return publication;
  }

  subscribe(consumer: EventConsumer): Promise<Subscription> {
    if (this.closing.signal.aborted) return Promise.reject(new Error('The event bus is closed.'));
    if (!this.declared.has(consumer.name)) {
      return Promise.reject(new Error(`Consumer ${consumer.name} was not declared to the in-process bus; its events would not be kept.`));
    }
    if (this.active.has(consumer.name)) return Promise.reject(new Error(`Consumer ${consumer.name} is already subscribed.`));
    const entry: Active = { consumer, slots: new Slots(consumer.concurrency) };
    this.active.set(consumer.name, entry);
    for (const wake of this.subscribed.get(consumer.name) ?? []) wake();
    this.subscribed.delete(consumer.name);
    return Promise.resolve({ stop: () => this.unsubscribe(entry) });
  }

  async close(): Promise<void> {
    this.closing.abort();
    for (const waiters of this.subscribed.values()) for (const wake of waiters) wake();
    this.subscribed.clear();
    await Promise.all([...this.active.values()].map((entry) => this.unsubscribe(entry)));
  }

  private async unsubscribe(entry: Active): Promise<void> {
    if (this.active.get(entry.consumer.name) === entry) this.active.delete(entry.consumer.name);
    if (!(await settlesWithin(entry.slots.idle(), this.options.stopTimeoutMs ?? 10_000, this.clock))) {
      this.options.logger.warn({ consumer: entry.consumer.name }, 'event handlers still running after stop');
    }
  }

  private async deliverToAll(envelope: EventEnvelope<object>, json: string, trace: TraceCarrier | null): Promise<void> {
    const subject = eventSubject(envelope, this.prefix);
    const results = await Promise.allSettled([...this.declared].map((name) => this.deliverTo(name, subject, envelope, json, trace)));
    const failed = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    if (failed.length > 0) throw new AggregateError(failed, `Event ${envelope.id} was not handled by every consumer.`);
  }

  private async deliverTo(name: string, subject: string, envelope: EventEnvelope<object>, json: string, trace: TraceCarrier | null): Promise<void> {
    if (this.wasHandled(envelope.id, name)) return;
    const deadline = this.clock.now() + (this.options.deliveryTimeoutMs ?? 120_000);
    for (let attempt = 1; ; attempt += 1) {
      const entry = await this.awaitSubscriber(name);
      if (!subjectMatches(entry.consumer.filter, subject)) return;
      await entry.slots.acquire();
      const info = { system: 'in-process', subject, eventType: envelope.type, consumer: name, eventId: envelope.id, attempt } as const;
      const work = consumeInTraceContext(trace, info, () => entry.consumer.handle(envelope, { json, attempt }));
      entry.slots.track(work);
      try {
        await work;
        this.markHandled(envelope.id, name);
        return;
      } catch (error) {
        const delayMs = backoffDelay(attempt, this.retry);
        this.options.logger.warn({ err: error, consumer: name, eventId: envelope.id, attempt, delayMs }, 'event handler failed; retrying');
        if (this.clock.now() + delayMs > deadline || this.closing.signal.aborted) throw error;
        await this.clock.sleep(delayMs, this.closing.signal);
      }
    }
  }

  /** The consumer's subscription, waiting (bounded) for a declared one that is not there yet. */
  private async awaitSubscriber(name: string): Promise<Active> {
    const deadline = this.clock.now() + (this.options.subscribeTimeoutMs ?? 10_000);
    for (;;) {
      if (this.closing.signal.aborted) throw new Error('The event bus is closed.');
      const entry = this.active.get(name);
      if (entry) return entry;
      const remaining = deadline - this.clock.now();
      if (remaining <= 0) throw new Error(`Consumer ${name} did not subscribe in time.`);
      const subscribed = new AbortController();
      const waiters = this.subscribed.get(name) ?? [];
      waiters.push(() => subscribed.abort());
      this.subscribed.set(name, waiters);
      await this.clock.sleep(remaining, subscribed.signal);
    }
  }

  private wasHandled(eventId: string, consumer: string): boolean {
    return this.handled.get(eventId)?.consumers.has(consumer) ?? false;
  }

  private markHandled(eventId: string, consumer: string): void {
    const now = this.clock.now();
    const windowMs = this.options.dedupWindowMs ?? 120_000;
    // Insertion order is age order, so expired ids are at the front.
    for (const [id, entry] of this.handled) {
      if (now - entry.at <= windowMs) break;
      this.handled.delete(id);
    }
    const entry = this.handled.get(eventId) ?? { at: now, consumers: new Set<string>() };
    entry.consumers.add(consumer);
    this.handled.set(eventId, entry);
  }
}
