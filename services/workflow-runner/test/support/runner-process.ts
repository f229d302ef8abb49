/**
 * A workflow-runner in a process of its own, so a test can SIGKILL it the way a crash (or an OOM
 * kill) would end it: no stop(), no lease handed back. Prints `ready <grpc port> <ingress port>`.
 */
import { createLogger } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { buildWorkflowRunnerService, loadWorkflowRunnerConfig } from '../../src/service.js';
import { TestAgentDirectory } from './agent-directory.js';
import { echoAgents } from './echo-agents.js';

const config = loadWorkflowRunnerConfig(process.env);
const logger = createLogger({ service: 'workflow-runner-child', level: 'silent' });
const bus = new InProcessEventBus({ consumers: [], logger });
// Its graphs name no agents: the directory stays empty.
const service = await buildWorkflowRunnerService(config, { logger, bus, agents: echoAgents, agentDirectory: new TestAgentDirectory() });
const { port, ingressPort } = await service.start();
process.stdout.write(`ready ${port} ${ingressPort}\n`);
