import { ACCESS, DomainError, FieldErrors, requireAccessFor, type Actor } from '@agent-platform/kit';
import { platformPrincipal, type PromiseClient } from '@agent-platform/kit/grpc';
import type { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import type { WorkflowGraph } from '../workflows/graph.js';

/** Whether an agent of the actor's tenant has this id (decisions §13.2: checked at save). */
export interface AgentDirectory {
  exists(actor: Actor, agentId: string): Promise<boolean>;
}

/**
 * Asks agent-memory. The question is the platform's, not the caller's: it is asked as a viewer of
 * the actor's tenant, so a key with workflows:write needs no agents:read to name an agent, and the
 * tenant still bounds what can be found.
 */
export class GrpcAgentDirectory implements AgentDirectory {
  private readonly client: PromiseClient<typeof AgentServiceService>;

  constructor(client: PromiseClient<typeof AgentServiceService>) {
    this.client = client;
  }

  async exists(actor: Actor, agentId: string): Promise<boolean> {
    try {
      await this.client.getAgent({ agentId }, { principal: platformPrincipal(actor, 'viewer') });
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') return false;
      throw error;
    }
  }
}

/**
 * decisions §13.2: every agent node of a graph that is otherwise valid names an agent of the
 * actor's tenant. One question per distinct agent, all at once; every node at fault is named.
 * Failures other than "not found" (agent-memory unavailable) propagate as they are. First, an
 * agent node chats with its agent whenever the workflow runs, so saving one needs what chatting
 * needs (decisions §12.12: a credential may not do through a workflow what it may not do itself).
 */
export async function checkAgentReferences(directory: AgentDirectory, actor: Actor, graph: WorkflowGraph): Promise<void> {
  const agentIds = new Set(graph.nodes.flatMap((node) => (node.type === 'agent' ? [node.config.agent_id] : [])));
  if (agentIds.size > 0) requireAccessFor(actor, ACCESS.agents.write, 'an agent node needs: it chats with its agent whenever the workflow runs');
  const answers = await Promise.all([...agentIds].map(async (agentId) => [agentId, await directory.exists(actor, agentId)] as const));
  const missing = new Set(answers.filter(([, exists]) => !exists).map(([agentId]) => agentId));
  const errors = new FieldErrors();
  // A whole graph's node indices are its request's: nothing was dropped when it passed.
  graph.nodes.forEach((node, index) => {
    if (node.type === 'agent' && missing.has(node.config.agent_id)) errors.add(`nodes[${index}].config.agent_id`, 'is not an agent of this tenant');
  });
  errors.throwIfAny();
}
