/** What agent-memory's tests need to hold workflow-runner's AgentDirectory port to its real adapter. */
export { GrpcAgentDirectory } from '../../src/agents/agent-directory.js';
export { agentDirectoryContract, type DirectoryUnderTest } from './agent-directory.contract.js';
