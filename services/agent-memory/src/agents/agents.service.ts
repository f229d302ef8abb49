import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Logger, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { Agent, AgentRecord, MemoryExtractionMode, MemoryExtractionSetting, MemoryType } from './agents.entity.js';
import { checkConfig, checkDescription, checkExtraction, checkMemoryTypes, checkName, checkType, DEFAULT_MEMORY_TYPES } from './agent-input.js';
import type { AgentChanges, AgentsRepository } from './agents.repository.js';
import type { RecentAgents } from './recent-agents.js';
import { requireToolAccess } from '../tools/tool-access.js';
import type { ToolsRepository } from '../tools/tools.repository.js';

export interface CreateAgent {
  name: string;
  type: string;
  description: string | undefined;
  memoryTypes: readonly string[];
  configJson: string | undefined;
  /** Tool ids of the tenant; empty means none. */
  tools: readonly string[];
}

/** PATCH: undefined leaves a field as it is. PUT (`replace`): name and type required, the rest reset. */
export interface UpdateAgent {
  replace: boolean;
  name: string | undefined;
  type: string | undefined;
  description: string | undefined;
  memoryTypes: readonly string[] | undefined;
  configJson: string | undefined;
  /** Replaces the list when present; PUT resets it to none when absent. */
  tools: readonly string[] | undefined;
}

export interface AgentsServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  tools: ToolsRepository;
  /** Told of every committed change, so this process's searches see it at once. */
  recentAgents: RecentAgents;
  /** Removes an agent's vectors once its rows are gone. */
  forgetVectors: (tenantId: string, agentId: string) => Promise<void>;
  logger: Logger;
}

/** Agents of the actor's tenant: validation, lifecycle and their events, in one transaction each. */
export class AgentsService {
  private readonly options: AgentsServiceOptions;

  constructor(options: AgentsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: CreateAgent, now = new Date()): Promise<Agent> {
    requireAccess(actor, ACCESS.agents.write);
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const type = checkType(request.type, errors);
    const description = request.description === undefined ? null : checkDescription(request.description, errors);
    const memoryTypes = checkMemoryTypes(request.memoryTypes, errors);
    const config = checkConfig(request.configJson, errors);
    checkExtraction(memoryTypes, config, errors);
    errors.throwIfAny();
    return this.options.em.transactional(async (em) => {
      const tools = await this.checkTools(actor, request.tools);
      const agent = this.options.agents.insert({ id: newId('agent'), tenantId: actor.tenantId, name, type, description, memoryTypes, config, tools, createdAt: now });
      await em.flush();
      await recordEvent(em, newEvent('agent.created', actor.tenantId, agentEventData(agent), now));
      return agent;
    });
  }

  list(actor: Actor, page: Page): Promise<{ items: Agent[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    return this.options.agents.list(actor.tenantId, page.perPage, page.offset);
  }

  async get(actor: Actor, id: string): Promise<AgentRecord> {
    requireAccess(actor, ACCESS.agents.read);
    return found(await this.options.agents.find(actor.tenantId, id));
  }

  async update(actor: Actor, id: string, request: UpdateAgent, now = new Date()): Promise<Agent> {
    requireAccess(actor, ACCESS.agents.write);
    const updated = await this.options.em.transactional(async (em) => {
      // not_found before validation: a foreign id must not learn anything from the error.
      const agent = found(await this.options.agents.findForUpdate(actor.tenantId, id));
      const changes = checkChanges(request);
      // Every save is held to the agent's tools, those it keeps too: an agent one may not arm, one may not re-prompt.
      changes.tools = await this.checkTools(actor, request.tools ?? (request.replace ? [] : agent.tools));
      this.options.agents.update(agent, changes, now);
      const errors = new FieldErrors();
      checkExtraction(agent.memoryTypes, agent.config, errors);
      errors.throwIfAny();
      await em.flush();
      await recordEvent(em, newEvent('agent.updated', actor.tenantId, agentEventData(agent), now));
      return agent;
    });
    this.options.recentAgents.forget(actor.tenantId, id);
    return updated;
  }

  /**
   * decisions §12: each id a tool of the tenant, else 422 naming its index (another tenant's tool
   * reads as unknown); then each one the saver may use, else 403 naming it (an agent acts with its
   * caller's credential, and a credential may not arm an agent with what it may not do itself).
   * Duplicates are folded; the order given is kept. Runs in the saving transaction, whose share
   * locks make a concurrent delete of a tool wait and then take it off.
   */
  private async checkTools(actor: Actor, ids: readonly string[]): Promise<string[]> {
    const known = await this.options.tools.existing(actor.tenantId, ids);
    const errors = new FieldErrors();
    ids.forEach((id, index) => {
      if (!known.has(id)) errors.add(`tools[${index}]`, 'is not a tool of this tenant');
    });
    errors.throwIfAny();
    ids.forEach((id, index) => {
      const tool = known.get(id)!;
      try {
        requireToolAccess(actor, tool.type);
      } catch (error) {
        if (error instanceof DomainError) throw new DomainError('forbidden', `tools[${index}] (${tool.name}): ${error.message}`, { cause: error });
        throw error;
      }
    });
    return [...new Set(ids)];
  }

  /** The rows go in one statement (cascading); the vectors after, so a crash leaves only stale vectors, which search ignores and the next start drops. */
  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.agents.write);
    if (!(await this.options.agents.delete(actor.tenantId, id))) throw DomainError.notFound('Agent');
    this.options.recentAgents.forget(actor.tenantId, id);
    try {
      await this.options.forgetVectors(actor.tenantId, id);
    } catch (error) {
      this.options.logger.warn({ err: error, agent_id: id }, 'vectors of a deleted agent were not removed; they are ignored and dropped at the next start');
    }
  }
}

function checkChanges(request: UpdateAgent): AgentChanges {
  const errors = new FieldErrors();
  const changes: AgentChanges = {};
  if (request.replace) {
    if (request.name === undefined) errors.add('name', 'is required');
    if (request.type === undefined) errors.add('type', 'is required');
  }
  if (request.name !== undefined) changes.name = checkName(request.name, errors);
  if (request.type !== undefined) changes.type = checkType(request.type, errors);
  if (request.description !== undefined) changes.description = checkDescription(request.description, errors);
  else if (request.replace) changes.description = null;
  if (request.memoryTypes !== undefined) changes.memoryTypes = checkMemoryTypes(request.memoryTypes, errors);
  else if (request.replace) changes.memoryTypes = [...DEFAULT_MEMORY_TYPES];
  if (request.configJson !== undefined) changes.config = checkConfig(request.configJson, errors);
  else if (request.replace) changes.config = {};
  errors.throwIfAny();
  return changes;
}

/** The agent, or not_found. */
export function found<T extends AgentRecord>(agent: T | null): T {
  if (!agent) throw DomainError.notFound('Agent');
  return agent;
}

/** The agent as the REST API shows it: the data of agent.created and agent.updated. */
export function agentEventData(agent: AgentRecord) {
  return {
    id: agent.id,
    name: agent.name,
    type: agent.type,
    description: agent.description,
    memory_types: agent.memoryTypes,
    config: agent.config,
    memory_extraction: memoryExtractionOf(agent),
    tools: agent.tools,
    status: agent.status,
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
  };
}

export function hasMemoryType(agent: AgentRecord, type: string): type is MemoryType {
  return (agent.memoryTypes as readonly string[]).includes(type);
}

/** decisions §14.2: the agent's extraction setting, its default (per end user when it keeps semantic memory) resolved. */
export function memoryExtractionOf(agent: AgentRecord): MemoryExtractionMode {
  return hasMemoryType(agent, 'semantic') ? extractionModeOf(agent.config.memory_extraction ?? true) : 'off';
}

export function extractionModeOf(setting: MemoryExtractionSetting): MemoryExtractionMode {
  if (setting === 'shared') return 'shared';
  return setting ? 'per_user' : 'off';
}

/**
 * decisions §14.2: whether facts are extracted from a turn. A turn without an end user extracts
 * nothing unless the agent opts into shared extraction: its facts could be anyone's, and shared
 * items reach every end user's turns.
 */
export function extractsMemory(agent: AgentRecord, userId: string | undefined): boolean {
  const mode = memoryExtractionOf(agent);
  return mode === 'shared' || (mode === 'per_user' && userId !== undefined);
}
