import { GrpcChannel, principalOf } from '@agent-platform/kit/grpc';
import { createTestDatabase } from '@agent-platform/kit/testing';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { agentDirectoryContract, GrpcAgentDirectory } from '@agent-platform/workflow-runner/contracts';
import { AGENTS_DATABASE, startAgentMemory } from './support/harness.js';

// workflow-runner asks agent-memory whether a graph's agents exist: its adapter against this
// service, held to the contract its stand-in (TestAgentDirectory) passes in workflow-runner's tests.
agentDirectoryContract('GrpcAgentDirectory over agent-memory', async () => {
  const database = await createTestDatabase(AGENTS_DATABASE);
  const service = await startAgentMemory(database);
  // Nothing listens on port 1.
  const nowhere = new GrpcChannel('127.0.0.1:1', { defaultDeadlineMs: 500 });
  return {
    directory: new GrpcAgentDirectory(service.agents),
    addAgent: async (actor) => (await service.createAgent({ tenantId: actor.tenantId, principal: principalOf(actor) })).id,
    deleteAgent: async (actor, agentId) => void (await service.agents.deleteAgent({ agentId }, { principal: principalOf(actor) })),
    unreachable: new GrpcAgentDirectory(nowhere.client(AgentServiceService)),
    close: async () => {
      nowhere.close();
      await service.stop();
      await database.drop();
    },
  };
});
