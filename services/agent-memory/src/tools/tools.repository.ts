import type { EntityManager } from '@agent-platform/kit/db';
import { LockMode } from '@mikro-orm/postgresql';
import type { ToolConfig, ToolType } from './kinds/tool-kinds.js';
import type { DiscoveredTool } from './mcp-client.js';
import { Tool } from './tools.entity.js';

export interface ToolFields {
  name: string;
  description: string | null;
  type: ToolType;
  config: ToolConfig;
  inputSchema: Record<string, unknown> | null;
  requiresApproval: boolean;
  discovered: DiscoveredTool[] | null;
}

export interface NewTool extends ToolFields {
  id: string;
  tenantId: string;
  createdAt: Date;
}

/** Every read and write takes the tenant id: another tenant's tool is simply not there. */
export class ToolsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  insert(tool: NewTool): Tool {
    return this.em.create(Tool, { ...tool, updatedAt: tool.createdAt });
  }

  find(tenantId: string, id: string): Promise<Tool | null> {
    return this.em.findOne(Tool, { id, tenantId });
  }

  /** Those of `ids` that are tools of the tenant, in no particular order. */
  findMany(tenantId: string, ids: readonly string[]): Promise<Tool[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.em.find(Tool, { tenantId, id: { $in: [...ids] } });
  }

  /** The tool, locked until the caller's transaction ends: a save in between waits, or is waited for. */
  findForUpdate(tenantId: string, id: string): Promise<Tool | null> {
    return this.em.findOne(Tool, { id, tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /** Newest first. */
  async list(tenantId: string, limit: number, offset: number): Promise<{ items: Tool[]; total: number }> {
    const [items, total] = await this.em.findAndCount(Tool, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  replace(tool: Tool, fields: ToolFields, now: Date): void {
    this.em.assign(tool, { ...fields, updatedAt: now });
  }

  setDiscovered(tool: Tool, discovered: DiscoveredTool[], now: Date): void {
    this.em.assign(tool, { discovered, updatedAt: now });
  }

  /**
   * Of `ids`, those that are tools of the tenant, with their types, share-locked until the
   * caller's transaction ends: a delete of one of them waits, then takes it off the agent being
   * saved, instead of missing an agent that was not committed yet.
   */
  async existing(tenantId: string, ids: readonly string[]): Promise<Map<string, Pick<Tool, 'name' | 'type'>>> {
    if (ids.length === 0) return new Map();
    const rows = await this.em.find(Tool, { tenantId, id: { $in: [...ids] } }, { fields: ['id', 'name', 'type'], lockMode: LockMode.PESSIMISTIC_READ });
    return new Map(rows.map((row) => [row.id, { name: row.name, type: row.type }]));
  }

  /**
   * The tool, and its id from every agent of the tenant that names it, in the caller's
   * transaction: an agent never names a tool that is gone. Each of those agents moves to its next
   * version (decisions §16: a change of tools makes one), made by `by`. The agents are locked
   * before the tool, in the order a save of an agent takes them (its row, then share locks on its
   * tools), so a delete and a save never wait on each other in a circle. False when there was no
   * such tool.
   */
  async delete(tenantId: string, id: string, by: { userId: string; at: Date }): Promise<boolean> {
    await this.em.execute(`select 1 from "agents" where "tenant_id" = ? and ? = any("tools") order by "id" for update`, [tenantId, id], 'all');
    const removed = await this.em.nativeDelete(Tool, { id, tenantId });
    if (removed === 0) return false;
    // Run after the delete, so it also takes the tool off an agent whose save named it meanwhile.
    await this.em.execute(
      `with "changed" as (
         update "agents" set "tools" = array_remove("tools", ?), "version" = "version" + 1, "updated_at" = ?
          where "tenant_id" = ? and ? = any("tools")
          returning "id", "tenant_id", "version", "memory_types", "config", "tools")
       insert into "agent_versions" ("agent_id", "version", "tenant_id", "memory_types", "config", "tools", "created_at", "created_by")
       select "id", "version", "tenant_id", "memory_types", "config", "tools", ?, ? from "changed"`,
      [id, by.at, tenantId, id, by.at, by.userId],
      'run',
    );
    return true;
  }
}
