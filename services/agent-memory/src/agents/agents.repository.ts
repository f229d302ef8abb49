import type { EntityManager } from '@agent-platform/kit/db';
import { Agent, type AgentSettings, type MemoryType } from './agents.entity.js';

export interface NewAgent {
  id: string;
  tenantId: string;
  name: string;
  type: string;
  description: string | null;
  memoryTypes: MemoryType[];
  config: AgentSettings;
  createdAt: Date;
}

export interface AgentChanges {
  name?: string;
  type?: string;
  description?: string | null;
  memoryTypes?: MemoryType[];
  config?: AgentSettings;
}

/** Every read and write takes the tenant id: another tenant's agent is simply not there. */
export class AgentsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  insert(agent: NewAgent): Agent {
    return this.em.create(Agent, { ...agent, status: 'active', updatedAt: agent.createdAt });
  }

  find(tenantId: string, id: string): Promise<Agent | null> {
    return this.em.findOne(Agent, { id, tenantId });
  }

  /** Newest first. */
  async list(tenantId: string, limit: number, offset: number): Promise<{ items: Agent[]; total: number }> {
    const [items, total] = await this.em.findAndCount(Agent, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  update(agent: Agent, changes: AgentChanges, now: Date): void {
    this.em.assign(agent, { ...changes, updatedAt: now });
  }

  /** Sessions, messages, memory items and documents go with it (ON DELETE CASCADE). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const removed = await this.em.nativeDelete(Agent, { id, tenantId });
    return removed > 0;
  }
}
