/**
 * A dispatcher in a process of its own, so a test can SIGKILL it the way a crash (or an OOM kill)
 * would end it: no stop(), no lease handed back. Events come over NATS, on the test's stream.
 * Prints `ready <grpc port>` once it serves.
 */
import { createLogger } from '@agent-platform/kit';
import { NatsEventBus } from '@agent-platform/kit/events';
import { buildWebhookDispatcherService, loadWebhookDispatcherConfig } from '../../src/service.js';

const config = loadWebhookDispatcherConfig(process.env);
const logger = createLogger({ service: 'webhook-dispatcher-child', level: 'silent' });
const subjectPrefix = process.env.TEST_NATS_SUBJECT_PREFIX;
const bus = await NatsEventBus.connect({ servers: config.natsUrl, name: 'webhook-dispatcher-child', logger, stream: process.env.TEST_NATS_STREAM, subjectPrefix });
const service = await buildWebhookDispatcherService(config, { logger, bus, ...(subjectPrefix ? { subjectPrefix } : {}) });
const { port } = await service.start();
process.stdout.write(`ready ${port}\n`);
