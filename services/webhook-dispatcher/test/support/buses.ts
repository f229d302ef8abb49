import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsEventBus, type EventBus, type EventConsumer, type EventEnvelope, type OutgoingEvent, type Subscription } from '@agent-platform/kit/events';
import { logger } from './harness.js';

export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A JetStream stream and subject space of one test file's own, on the shared NATS server. */
export interface NatsSpace {
  stream: string;
  subjectPrefix: string;
  /** A bus on that stream, as a separate process would open it; closed with the file. */
  connect(name: string): Promise<NatsEventBus>;
}

/** A file-scoped vitest fixture: the space, its buses closed and its stream deleted afterwards. */
export function natsFixture() {
  // eslint-disable-next-line no-empty-pattern -- vitest reads fixture dependencies from this pattern; there are none.
  return ({}: object, { onCleanup }: { onCleanup: (cleanup: () => Promise<void>) => void }): NatsSpace => {
    const tag = randomBytes(5).toString('hex');
    const stream = `WHT_${tag}`;
    const subjectPrefix = `wht_${tag}`;
    const buses: NatsEventBus[] = [];
    onCleanup(async () => {
      await Promise.all(buses.map((bus) => bus.close()));
      const nc = await connect({ servers: NATS_URL });
      try {
        await (await jetstreamManager(nc)).streams.delete(stream);
      } finally {
        await nc.close();
      }
    });
    return {
      stream,
      subjectPrefix,
      async connect(name) {
        const bus = await NatsEventBus.connect({ servers: NATS_URL, name, logger, stream, subjectPrefix, retry: { initialMs: 100, maxMs: 400 } });
        buses.push(bus);
        return bus;
      },
    };
  };
}

/**
 * An EventBus that hands events straight to the subscribed consumer, as often as it is told to:
 * it stands in for a transport redelivering an event (a lost ack), which real buses de-duplicate
 * on publish and so cannot be made to do on demand.
 */
export class CapturingBus implements EventBus {
  readonly system = 'in-process';
  private consumer: EventConsumer | undefined;

  publish(envelope: EventEnvelope<object>, json = JSON.stringify(envelope)): Promise<void> {
    return this.deliver(envelope, json, 1);
  }

  async publishAll(events: readonly OutgoingEvent[]): Promise<void> {
    for (const event of events) await this.publish(event.envelope, event.json);
  }

  /** Hands the event to the consumer again, as a redelivery numbered `attempt`. */
  async deliver(envelope: EventEnvelope<object>, json: string, attempt: number): Promise<void> {
    if (!this.consumer) throw new Error('nothing subscribed');
    await this.consumer.handle(envelope, { json, attempt });
  }

  subscribe(consumer: EventConsumer): Promise<Subscription> {
    this.consumer = consumer;
    return Promise.resolve({
      stop: () => {
        this.consumer = undefined;
        return Promise.resolve();
      },
    });
  }

  close(): Promise<void> {
    this.consumer = undefined;
    return Promise.resolve();
  }
}
