import { isDeepStrictEqual } from 'node:util';
import { ACCESS, DomainError, FieldErrors, newId, requireAccess, requireVersionNumber, type Actor, type Logger, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { AgentVersionRecord, AgentVersionsRepository, AgentVersionSummary } from './agent-versions.repository.js';
import type { Agent, AgentRecord, AgentSettingsVersion, MemoryExtractionMode, MemoryExtractionSetting, MemoryType } from './agents.entity.js';
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
  versions: AgentVersionsRepository;
  tools: ToolsRepository;
  /** Told of every committed change, so this process's searches see it at once. */
  recentAgents: RecentAgents;
  /** Removes an agent's vectors once its rows are gone. */
  forgetVectors: (tenantId: string, agentId: string) => Promise<void>;
  logger: Logger;
}

/**
 * Agents of the actor's tenant: validation, lifecycle, versions (decisions §16) and their events,
 * in one transaction each.
 */
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
      // The agent's row first: its version 1 refers to it.
      await em.flush();
      this.recordVersion(actor, agent, now);
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
      this.apply(actor, agent, changes, now, 'when_changed');
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

  /** Newest first, without their settings. */
  async listVersions(actor: Actor, agentId: string, page: Page): Promise<{ items: AgentVersionSummary[]; total: number }> {
    requireAccess(actor, ACCESS.agents.read);
    found(await this.options.agents.find(actor.tenantId, agentId));
    return this.options.versions.list(actor.tenantId, agentId, page.perPage, page.offset);
  }

  async getVersion(actor: Actor, agentId: string, version: number): Promise<AgentVersionRecord> {
    requireAccess(actor, ACCESS.agents.read);
    requireVersionNumber(version);
    found(await this.options.agents.find(actor.tenantId, agentId));
    return this.versionOf(actor, agentId, version);
  }

  /**
   * decisions §16: a new version whose settings are `version`'s, saved as an update of them would
   * be, even when they equal the current ones (as workflows restore, §13.1). They are held to
   * today's rules and tools again: a tool deleted since, or one the actor may not use, refuses it.
   * Emits agent.updated.
   */
  async restoreVersion(actor: Actor, agentId: string, version: number, now = new Date()): Promise<Agent> {
    requireAccess(actor, ACCESS.agents.write);
    requireVersionNumber(version);
    const restored = await this.options.em.transactional(async (em) => {
      const agent = found(await this.options.agents.findForUpdate(actor.tenantId, agentId));
      const kept = await this.versionOf(actor, agentId, version);
      const errors = new FieldErrors();
      const memoryTypes = checkMemoryTypes(kept.memoryTypes, errors);
      const config = checkConfig(JSON.stringify(kept.config), errors);
      checkExtraction(memoryTypes, config, errors);
      errors.throwIfAny();
      const tools = await this.checkTools(actor, kept.tools);
      this.apply(actor, agent, { memoryTypes, config, tools }, now, 'always');
      await em.flush();
      await recordEvent(em, newEvent('agent.updated', actor.tenantId, agentEventData(agent), now));
      return agent;
    });
    this.options.recentAgents.forget(actor.tenantId, agentId);
    return restored;
  }

  /**
   * The agent as it was at `version`: that version's settings under today's name, type and
   * description (which versions do not hold), for a turn asked to run a past version (decisions
   * §16, `agent_version`). not_found for an unknown agent or version. Access is the caller's to
   * require: a turn needs agents:write, which a key may hold without agents:read.
   */
  async atVersion(actor: Actor, agentId: string, version: number): Promise<AgentRecord> {
    requireVersionNumber(version);
    const agent = found(await this.options.agents.find(actor.tenantId, agentId));
    // The current version is the agent's row itself: a turn on it reads nothing more.
    if (version === agent.version) return agent;
    const past = await this.versionOf(actor, agentId, version);
    return { ...agent, version: past.version, memoryTypes: past.memoryTypes, config: past.config, tools: past.tools };
  }

  /** A version of an agent already found in the actor's tenant, or not_found. */
  private async versionOf(actor: Actor, agentId: string, version: number): Promise<AgentVersionRecord> {
    const row = await this.options.versions.find(actor.tenantId, agentId, version);
    if (!row) throw DomainError.notFound('Agent version');
    return row;
  }

  /**
   * Applies changes to the agent, its row locked. A change of what a version holds (config, tools,
   * memory_types; or any restore) makes the next version in the same transaction; name, type and
   * description alone keep the current one.
   */
  private apply(actor: Actor, agent: Agent, changes: AgentChanges, now: Date, newVersion: 'when_changed' | 'always'): void {
    const versioned = newVersion === 'always' || !sameSettings(agent, { ...settingsOf(agent), ...changes });
    this.options.agents.update(agent, versioned ? { ...changes, version: agent.version + 1 } : changes, now);
    if (versioned) this.recordVersion(actor, agent, now);
  }

  /** The agent's settings as its current version, written at the next flush. */
  private recordVersion(actor: Actor, agent: Agent, now: Date): void {
    this.options.versions.insert({ agentId: agent.id, version: agent.version, tenantId: agent.tenantId, ...settingsOf(agent), createdAt: now, createdBy: actor.userId });
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

/** Copies, so a version never shares a list or object with the agent's entity. */
function settingsOf(agent: AgentSettingsVersion): AgentSettingsVersion {
  return { memoryTypes: [...agent.memoryTypes], config: { ...agent.config }, tools: [...agent.tools] };
}

/** Key order aside (jsonb keeps its own), as the lists' order matters: tools are offered in it. */
function sameSettings(a: AgentSettingsVersion, b: AgentSettingsVersion): boolean {
  return isDeepStrictEqual(a.memoryTypes, b.memoryTypes) && isDeepStrictEqual(a.tools, b.tools) && isDeepStrictEqual(a.config, b.config);
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
    version: agent.version,
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
