import { defineEntity, p } from '@mikro-orm/postgresql';

export const MEMORY_TYPES = ['semantic', 'episodic', 'procedural'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const AGENT_STATUSES = ['active'] as const;

/** decisions §6: the model settings an agent may carry; absent keys take the platform's defaults. */
export interface AgentSettings {
  model?: string;
  temperature?: number;
  max_tokens?: number;
  system_prompt?: string;
  top_p?: number;
  /** decisions §12: model rounds that may call tools in one turn (default 8). */
  max_tool_rounds?: number;
  /**
   * decisions §14.2: facts are extracted from turns into semantic memory: true (the default when
   * the agent keeps semantic memory) from turns with a user_id, "shared" from turns without one too.
   */
  memory_extraction?: MemoryExtractionSetting;
}

export type MemoryExtractionSetting = boolean | 'shared';

/** What an agent's setting comes to, its default resolved. */
export type MemoryExtractionMode = 'off' | 'per_user' | 'shared';

export const AgentSchema = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    name: p.text(),
    /** Free text 1..64 of [a-z0-9_-] (support, assistant, …). */
    type: p.text(),
    description: p.text().strictNullable(),
    memoryTypes: p.array<MemoryType>(),
    config: p.json<AgentSettings>().columnType('jsonb'),
    status: p.enum(AGENT_STATUSES),
    /** Tool ids of the tenant (decisions §12), in the order given. */
    tools: p.array<string>(),
    /** decisions §16: the version of the current settings, 1 at creation. */
    version: p.integer(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class Agent extends AgentSchema.class {}
AgentSchema.setClass(Agent);

/** An agent as read, outside the unit of work: what every read path and answer needs. */
export type AgentRecord = Pick<Agent, 'id' | 'tenantId' | 'name' | 'type' | 'description' | 'memoryTypes' | 'config' | 'tools' | 'status' | 'version' | 'createdAt' | 'updatedAt'>;

/**
 * What a version of an agent holds (decisions §16): what its turns do. Name, type and description
 * are for people and change no turn; a change of them alone makes no version, so a version that
 * held them would show what the agent was called when the version was made, not what it is.
 */
export type AgentSettingsVersion = Pick<AgentRecord, 'memoryTypes' | 'config' | 'tools'>;
