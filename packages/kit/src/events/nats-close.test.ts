import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.js';
import { NatsEventBus } from './nats-bus.js';

// A nats-server of our own, so stopping it disturbs nothing else.
const logger = createLogger({ service: 'nats-close-test', level: 'silent' });

let nats: TestNatsServer;
beforeAll(async () => {
  nats = await startTestNatsServer();
});
afterAll(async () => {
  await nats?.dispose();
});

it('closes within its bound while NATS is down, consumers and all', async () => {
  const bus = await NatsEventBus.connect({ servers: nats.url, name: 'close-test', logger });
  await bus.subscribe({ name: 'close-consumer', filter: 'events.>', concurrency: 1, handle: () => Promise.resolve() });
  await nats.stop();
  // The test's time-out is the bound: close() used to wait forever for a reconnection that never came
  // (the refused drain left the connection open). It now ends within closeTimeoutMs (10 s by default).
  await bus.close();
  await expect(bus.subscribe({ name: 'late', filter: 'events.>', concurrency: 1, handle: () => Promise.resolve() })).rejects.toThrow('The event bus is closed.');
}, 15_000);
