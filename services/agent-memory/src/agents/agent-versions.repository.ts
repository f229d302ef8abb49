import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { AgentVersion } from './agent-versions.entity.js';
import type { AgentSettings, MemoryType } from './agents.entity.js';

/** A version as read, outside the unit of work. */
export type AgentVersionRecord = Pick<AgentVersion, 'version' | 'memoryTypes' | 'config' | 'tools' | 'createdAt' | 'createdBy'>;

/** A version as lists show it: without its settings. */
export type AgentVersionSummary = Pick<AgentVersion, 'version' | 'createdAt' | 'createdBy'>;

const versionRead = new PreparedStatement<VersionRow>(
  'agents_version_by_number',
  `select "version", "memory_types", "config", "tools", "created_at", "created_by"
     from "agent_versions" where "agent_id" = ? and "version" = ? and "tenant_id" = ?`,
);

interface VersionRow {
  version: number;
  memory_types: MemoryType[];
  config: AgentSettings;
  tools: string[];
  created_at: string | Date;
  created_by: string | null;
}

/** Versions of the tenant's agents; every read takes the tenant id, as the agents' own do. */
export class AgentVersionsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** Written at the next flush, in the transaction that moves the agent to this version. */
  insert(version: AgentVersion): AgentVersion {
    return this.em.create(AgentVersion, version);
  }

  /** One prepared query, as the agent's own read: a turn on a past version reads both. */
  async find(tenantId: string, agentId: string, version: number): Promise<AgentVersionRecord | null> {
    const [row] = await versionRead.rows(this.em, [agentId, version, tenantId]);
    if (!row) return null;
    return {
      version: row.version,
      memoryTypes: row.memory_types,
      config: row.config,
      tools: row.tools,
      createdAt: new Date(row.created_at),
      createdBy: row.created_by,
    };
  }

  /** Newest first. */
  async list(tenantId: string, agentId: string, limit: number, offset: number): Promise<{ items: AgentVersionSummary[]; total: number }> {
    const [items, total] = await this.em.findAndCount(
      AgentVersion,
      { agentId, tenantId },
      { fields: ['version', 'createdAt', 'createdBy'], orderBy: { version: 'desc' }, limit, offset },
    );
    return { items, total };
  }
}
