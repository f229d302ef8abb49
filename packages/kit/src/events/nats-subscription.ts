import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventConsumer, RetryBackoff } from './bus.js';
import { parseEnvelope } from './envelope.js';
import { backoffDelay, settlesWithin, Slots } from './timing.js';
import { consumeInTraceContext, type TraceCarrier } from './trace-context.js';

export interface NatsSubscriptionOptions {
  js: JetStreamClient;
  stream: string;
  consumer: EventConsumer;
  /** Creates or updates the durable consumer on the server. */
  ensureConsumer: () => Promise<void>;
  logger: Logger;
  ackWaitMs: number;
  retry: RetryBackoff;
  stopTimeoutMs: number;
  /** Measures the wait for handlers at stop and the pause before a consume loop restarts. */
  clock: Clock;
}

// ms between attempts to restart a consume loop that ended with an error (e.g. NATS away).
const RESTART_DELAY_MS = 1_000;
// ms to wait for the client library to wind a stopped iterator down.
const CLOSE_TIMEOUT_MS = 2_000;

/**
 * One durable pull consumer, consumed with at most `concurrency` handlers in flight: a message is
 * taken from the iterator only when a slot is free. Success acks; failure naks with back-off;
 * a payload that is not an envelope is logged and terminated, never redelivered forever.
 */
export class NatsSubscription {
  private readonly slots: Slots;
  private readonly stopping = new AbortController();
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: NatsSubscriptionOptions) {
    this.slots = new Slots(options.consumer.concurrency);
  }

  /** Creates the consumer (rejecting when that fails) and starts consuming in the background. */
  async start(): Promise<void> {
    await this.options.ensureConsumer();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    // Ends the iterator; the loop then closes it (close() settles only once it was iterated out).
    this.messages?.stop();
    // The loop ends once it gets a slot back, so both waits are bounded by the handlers in flight.
    const settled = Promise.all([this.loop, this.slots.idle()]);
    if (!(await settlesWithin(settled, this.options.stopTimeoutMs, this.options.clock))) {
      this.options.logger.warn('event handlers still running after stop');
    }
  }

  private async run(): Promise<void> {
    const { logger } = this.options;
    while (!this.stopping.signal.aborted) {
      try {
        await this.consumeOnce();
      } catch (error) {
        if (this.stopping.signal.aborted) break;
        logger.warn({ err: error }, 'event consumer interrupted; restarting');
      }
      await this.options.clock.sleep(RESTART_DELAY_MS, this.stopping.signal);
    }
  }

  private async consumeOnce(): Promise<void> {
    const { js, stream, consumer } = this.options;
    const pull = await js.consumers.get(stream, consumer.name);
    const messages = await pull.consume({ max_messages: consumer.concurrency });
    this.messages = messages;
    // stop() may have run while consume() was starting, before there was an iterator to stop.
    if (this.stopping.signal.aborted) messages.stop();
    const watching = this.watch(messages);
    try {
      const iterator = messages[Symbol.asyncIterator]();
      for (;;) {
        await this.slots.acquire();
        const next = await iterator.next().catch((error: unknown) => {
          this.slots.release();
          throw error;
        });
        if (next.done === true) {
          this.slots.release();
          break;
        }
        if (this.stopping.signal.aborted) {
          // Taken after stop: hand it back at once rather than after ack_wait.
          next.value.nak();
          this.slots.release();
          continue;
        }
        this.slots.track(this.handle(next.value));
      }
    } finally {
      messages.stop();
      await settlesWithin(Promise.all([messages.closed(), watching]), CLOSE_TIMEOUT_MS);
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    const { consumer, logger } = this.options;
    const json = msg.string();
    const envelope = parseEnvelope(json);
    const attempt = msg.info.deliveryCount;
    if (!envelope) {
      logger.error({ subject: msg.subject, seq: msg.seq, size: msg.data.length }, 'malformed event payload; terminated');
      // No reason text: servers before 2.10 do not understand `+TERM <reason>` and leave it pending.
      answerSafely(logger, undefined, () => msg.term());
      return;
    }
    // A slow handler must not be redelivered to another replica while it is still working.
    const answer = (send: () => void) => answerSafely(logger, envelope.id, send);
    const keepAlive = setInterval(() => answer(() => msg.working()), Math.max(this.options.ackWaitMs / 3, 100));
    try {
      const info = { system: 'nats', subject: msg.subject, eventType: envelope.type, consumer: consumer.name, eventId: envelope.id, attempt } as const;
      await consumeInTraceContext(traceOf(msg), info, () => consumer.handle(envelope, { json, attempt }));
      answer(() => msg.ack());
    } catch (error) {
      const delayMs = backoffDelay(attempt, this.options.retry);
      logger.warn({ err: error, eventId: envelope.id, type: envelope.type, attempt, delayMs }, 'event handler failed; redelivering later');
      answer(() => msg.nak(delayMs));
    } finally {
      clearInterval(keepAlive);
    }
  }

  /** Logs what the consumer reports and recreates it when it was deleted under us. */
  private async watch(messages: ConsumerMessages): Promise<void> {
    const { logger } = this.options;
    try {
      for await (const note of messages.status()) {
        if (note.type === 'consumer_deleted' || note.type === 'consumer_not_found') {
          logger.warn({ notification: note.type }, 'durable consumer missing; recreating');
          await this.options.ensureConsumer().catch((error: unknown) => logger.warn({ err: error }, 'could not recreate the consumer'));
        } else if (note.type === 'heartbeats_missed') {
          logger.debug({ count: note.count }, 'consumer heartbeats missed');
        }
      }
    } catch (error) {
      logger.debug({ err: error }, 'consumer status stream ended');
    }
  }
}

/** The publisher's trace context from the message headers, if it sent any. */
function traceOf(msg: JsMsg): TraceCarrier | null {
  const carrier: TraceCarrier = {};
  for (const key of ['traceparent', 'tracestate']) {
    const value = msg.headers?.get(key);
    if (value) carrier[key] = value;
  }
  return Object.keys(carrier).length > 0 ? carrier : null;
}

/** Sends an ack, nak, term or progress; a closed connection throws, which must not crash a timer. */
function answerSafely(logger: Logger, eventId: string | undefined, send: () => void): void {
  try {
    send();
  } catch (error) {
    // The server redelivers after ack_wait, as at-least-once allows.
    logger.warn({ err: error, eventId }, 'could not answer JetStream for an event');
  }
}
