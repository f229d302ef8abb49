import { DomainError, type Actor } from '@agent-platform/kit';
import { PrincipalKind, type OutgoingCall, type PromiseClient } from '@agent-platform/kit/grpc';
import type { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { describe, expect, it } from 'vitest';
import type { WorkflowGraph } from '../workflows/graph.js';
import { checkAgentReferences, GrpcAgentDirectory, type AgentDirectory } from './agent-directory.js';

// A key that may save agent nodes (agents:write, decisions §13.2) but not read agents: the existence question is the platform's.
const actor: Actor = { kind: 'api_key', userId: 'usr_1', tenantId: 'tnt_1', role: 'member', scopes: ['workflows:write', 'agents:write'] };

function graphOf(...agentIds: string[]): WorkflowGraph {
  return {
    nodes: [{ id: 'start', type: 'webhook', config: { path: '' } }, ...agentIds.map((agent_id, index) => ({ id: `ask${index}`, type: 'agent' as const, config: { agent_id } }))],
    edges: [],
  };
}

/** Answers only when told: shows which questions were in flight at once. */
function pendingDirectory(known: ReadonlySet<string>) {
  const waiting: { agentId: string; answer: () => void }[] = [];
  const directory: AgentDirectory = {
    exists: (_actor, agentId) => new Promise((resolve) => waiting.push({ agentId, answer: () => resolve(known.has(agentId)) })),
  };
  return { directory, waiting };
}

describe('checkAgentReferences', () => {
  it('asks once per distinct agent, all at once, and names every node at fault in graph order', async () => {
    const { directory, waiting } = pendingDirectory(new Set(['agt_a']));
    const checking = checkAgentReferences(directory, actor, graphOf('agt_x', 'agt_a', 'agt_x', 'agt_y'));
    // Every question is out before the first answer comes back.
    expect(waiting.map((question) => question.agentId)).toEqual(['agt_x', 'agt_a', 'agt_y']);
    for (const question of waiting) question.answer();
    const error = await checking.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_error');
    expect((error as DomainError).details).toEqual([
      { field: 'nodes[1].config.agent_id', message: 'is not an agent of this tenant' },
      { field: 'nodes[3].config.agent_id', message: 'is not an agent of this tenant' },
      { field: 'nodes[4].config.agent_id', message: 'is not an agent of this tenant' },
    ]);
  });

  it('asks nothing of a graph without agent nodes, and passes one whose agents all exist', async () => {
    const { directory, waiting } = pendingDirectory(new Set(['agt_a']));
    await checkAgentReferences(directory, actor, graphOf());
    expect(waiting).toEqual([]);
    const checking = checkAgentReferences(directory, actor, graphOf('agt_a'));
    waiting[0]?.answer();
    await expect(checking).resolves.toBeUndefined();
  });
});

describe('GrpcAgentDirectory', () => {
  function clientAnswering(answer: (agentId: string) => Promise<void>) {
    const calls: OutgoingCall[] = [];
    const client = {
      getAgent: async ({ agentId }: { agentId: string }, call: OutgoingCall = {}) => {
        calls.push(call);
        await answer(agentId);
        return {};
      },
    } as unknown as PromiseClient<typeof AgentServiceService>;
    return { client, calls };
  }

  it("asks as a viewer of the actor's tenant, whatever the actor is, and reads not_found as absent", async () => {
    const { client, calls } = clientAnswering((agentId) => (agentId === 'agt_a' ? Promise.resolve() : Promise.reject(DomainError.notFound('Agent'))));
    const directory = new GrpcAgentDirectory(client);
    expect(await directory.exists(actor, 'agt_a')).toBe(true);
    expect(await directory.exists(actor, 'agt_b')).toBe(false);
    expect(calls[0]?.principal).toEqual({ kind: PrincipalKind.KIND_USER, userId: 'usr_1', apiKeyId: '', tenantId: 'tnt_1', role: 'viewer', scopes: [] });
  });

  it('lets any other failure through as it is', async () => {
    const unavailable = new DomainError('service_unavailable', 'agent-memory is unavailable.');
    const { client } = clientAnswering(() => Promise.reject(unavailable));
    await expect(new GrpcAgentDirectory(client).exists(actor, 'agt_a')).rejects.toBe(unavailable);
  });
});
