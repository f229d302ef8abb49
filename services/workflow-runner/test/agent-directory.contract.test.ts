import { DomainError } from '@agent-platform/kit';
import { agentDirectoryContract } from './support/agent-directory.contract.js';
import { TestAgentDirectory } from './support/agent-directory.js';

// The stand-in against the contract its real adapter passes in agent-memory's tests.
agentDirectoryContract('TestAgentDirectory', () => {
  const directory = new TestAgentDirectory();
  const unreachable = new TestAgentDirectory();
  unreachable.failure = new DomainError('service_unavailable', 'agent-memory is unavailable.');
  return Promise.resolve({
    directory,
    addAgent: (actor) => Promise.resolve(directory.add(actor.tenantId)),
    deleteAgent: (actor, agentId) => Promise.resolve(directory.delete(actor.tenantId, agentId)),
    unreachable,
    close: () => Promise.resolve(),
  });
});
