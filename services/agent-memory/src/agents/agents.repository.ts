import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { LockMode } from '@mikro-orm/postgresql';
import { Agent, type AgentRecord, type AgentSettings, type MemoryType } from './agents.entity.js';

export interface NewAgent {
  id: string;
  tenantId: string;
  name: string;
  type: string;
  description: string | null;
  memoryTypes: MemoryType[];
  config: AgentSettings;
  tools: string[];
  createdAt: Date;
}

export interface AgentChanges {
  name?: string;
  type?: string;
  description?: string | null;
  memoryTypes?: MemoryType[];
  config?: AgentSettings;
  tools?: string[];
  version?: number;
}

const agentRead = new PreparedStatement<AgentRow>(
  'agents_agent_by_id',
  `select "id", "tenant_id", "name", "type", "description", "memory_types", "config", "tools", "status", "version", "created_at", "updated_at"
     from "agents" where "id" = ? and "tenant_id" = ?`,
);

interface AgentRow {
  id: string;
  tenant_id: string;
  name: string;
  type: string;
  description: string | null;
  memory_types: MemoryType[];
  config: AgentSettings;
  tools: string[];
  status: AgentRecord['status'];
  version: number;
  created_at: string | Date;
  updated_at: string | Date;
}

/** Every read and write takes the tenant id: another tenant's agent is simply not there. */
export class AgentsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  insert(agent: NewAgent): Agent {
    return this.em.create(Agent, { ...agent, status: 'active', version: 1, updatedAt: agent.createdAt });
  }

  /**
   * The agent for reading. Every chat turn, search and GET starts here, so it is one prepared
   * query rather than an entity load: building the query and hydrating an entity took a quarter of
   * an agent read's time.
   */
  async find(tenantId: string, id: string): Promise<AgentRecord | null> {
    const [row] = await agentRead.rows(this.em, [id, tenantId]);
    if (!row) return null;
    return {
      id: row.id,
      tenantId: row.tenant_id,
      name: row.name,
      type: row.type,
      description: row.description,
      memoryTypes: row.memory_types,
      config: row.config,
      tools: row.tools,
      status: row.status,
      version: row.version,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
    };
  }

  /**
   * The agent as an entity, for a change to flush, its row locked until the transaction ends: the
   * lock is what makes concurrent saves take consecutive versions (decisions §16).
   */
  findForUpdate(tenantId: string, id: string): Promise<Agent | null> {
    return this.em.findOne(Agent, { id, tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
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
