/**
 * agent-memory in a process of its own, so a test can SIGKILL it the way a crash (or an OOM kill)
 * would end it: no stop(), no lease handed back. Credits are never short here, and every credential
 * holds at a tool call. Prints `ready <port>`.
 */
import { createLogger, type Actor } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { buildAgentMemoryService, loadAgentMemoryConfig } from '../../src/service.js';

const config = loadAgentMemoryConfig(process.env);
const logger = createLogger({ service: 'agent-memory-child', level: 'silent' });
const bus = new InProcessEventBus({ consumers: [], logger });
const credits = { ensureAvailable: () => Promise.resolve(), charge: () => Promise.resolve() };
const principals = { confirm: (actor: Actor) => Promise.resolve(actor) };
const service = await buildAgentMemoryService(config, { logger, bus, credits, principals });
const { port } = await service.start();
process.stdout.write(`ready ${port}\n`);
