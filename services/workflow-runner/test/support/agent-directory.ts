import { newId, type Actor, type DomainError } from '@agent-platform/kit';
import type { AgentDirectory } from '../../src/agents/agent-directory.js';

/**
 * The agents of each tenant as agent-memory's GetAgent would answer for them: a test adds the
 * agents its graphs name and deletes them again. Held to GrpcAgentDirectory over the real
 * agent-memory by agentDirectoryContract (agent-directory.contract.ts), which both pass.
 */
export class TestAgentDirectory implements AgentDirectory {
  private readonly agents = new Map<string, Set<string>>();
  /** Every question asked, in order, as `<tenant>/<agent>`. */
  readonly asked: string[] = [];
  /** Set, every question fails with it: agent-memory unavailable. */
  failure: DomainError | undefined;

  /** A new agent of the tenant; its id. */
  add(tenantId: string, agentId: string = newId('agent')): string {
    const agents = this.agents.get(tenantId) ?? new Set<string>();
    agents.add(agentId);
    this.agents.set(tenantId, agents);
    return agentId;
  }

  delete(tenantId: string, agentId: string): void {
    this.agents.get(tenantId)?.delete(agentId);
  }

  exists(actor: Actor, agentId: string): Promise<boolean> {
    this.asked.push(`${actor.tenantId}/${agentId}`);
    if (this.failure) return Promise.reject(this.failure);
    return Promise.resolve(this.agents.get(actor.tenantId)?.has(agentId) ?? false);
  }
}
