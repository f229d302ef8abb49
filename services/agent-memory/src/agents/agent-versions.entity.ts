import { defineEntity, p } from '@mikro-orm/postgresql';
import type { AgentSettings, MemoryType } from './agents.entity.js';

/**
 * One version of an agent's settings (decisions §16): creation is version 1, every change of
 * config, tools or memory_types and every restore the next. Never changed once written; it goes
 * with its agent.
 */
export const AgentVersionSchema = defineEntity({
  name: 'AgentVersion',
  tableName: 'agent_versions',
  properties: {
    agentId: p.string().primary(),
    version: p.integer().primary(),
    tenantId: p.string(),
    memoryTypes: p.array<MemoryType>(),
    config: p.json<AgentSettings>().columnType('jsonb'),
    tools: p.array<string>(),
    createdAt: p.datetime(),
    /** The user whose save, restore or tool deletion made it; null for the versions 1 of agents made before versions were kept. */
    createdBy: p.string().strictNullable(),
  },
});

export class AgentVersion extends AgentVersionSchema.class {}
AgentVersionSchema.setClass(AgentVersion);
