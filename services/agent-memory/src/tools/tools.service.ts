import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import { isUniqueViolation, type EntityManager } from '@agent-platform/kit/db';
import type { ToolSaveServices } from './kinds/tool-kind.js';
import { checkConfigKeys, checkType, isToolType, toolKindOf, type ToolConfig } from './kinds/tool-kinds.js';
import { checkDescription, checkInputSchema, checkName, parseObject, refuseInputSchema } from './tool-input.js';
import { requireToolAccess } from './tool-access.js';
import { TOOLS_TENANT_NAME_KEY, type Tool } from './tools.entity.js';
import type { ToolFields, ToolsRepository } from './tools.repository.js';

/** A tool as sent: JSON texts as they came, so unknown keys reach validation. */
export interface ToolRequest {
  name: string;
  description: string | undefined;
  type: string;
  configJson: string | undefined;
  inputSchemaJson: string | undefined;
  requiresApproval: boolean | undefined;
}

export interface ToolsServiceOptions extends ToolSaveServices {
  em: EntityManager;
  tools: ToolsRepository;
}

/** Tools of the actor's tenant (decisions §12): validation, sealing, lifecycle. No events: §8 names none. */
export class ToolsService {
  private readonly options: ToolsServiceOptions;

  constructor(options: ToolsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: ToolRequest, now = new Date()): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.write);
    requireSaveAccess(actor, request);
    const id = newId('tool');
    const fields = await this.check(actor, id, request, undefined);
    return this.saving(() =>
      this.options.em.transactional(async (em) => {
        const tool = this.options.tools.insert({ id, tenantId: actor.tenantId, ...fields, createdAt: now });
        await em.flush();
        return tool;
      }),
    );
  }

  list(actor: Actor, page: Page): Promise<{ items: Tool[]; total: number }> {
    requireAccess(actor, ACCESS.tools.read);
    return this.options.tools.list(actor.tenantId, page.perPage, page.offset);
  }

  async get(actor: Actor, id: string): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.read);
    return found(await this.options.tools.find(actor.tenantId, id));
  }

  /** PUT: the whole tool. A header sent as "***" keeps the value stored under its name. */
  async replace(actor: Actor, id: string, request: ToolRequest, now = new Date()): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.write);
    // not_found before validation: a foreign id must not learn anything from the error.
    const current = found(await this.options.tools.find(actor.tenantId, id));
    requireSaveAccess(actor, request);
    const fields = await this.check(actor, id, request, current);
    return this.saving(() =>
      this.options.em.transactional(async (em) => {
        const tool = found(await this.options.tools.find(actor.tenantId, id));
        this.options.tools.replace(tool, fields, now);
        await em.flush();
        return tool;
      }),
    );
  }

  /**
   * Asks the server of a tool that discovers its tools (mcp) for them again and stores the list.
   * A server that fails is upstream_error, and the stored list stays as it was. allowed_tools is
   * not checked against the new list: a name the server no longer lists is simply not offered.
   */
  async refresh(actor: Actor, id: string, now = new Date()): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.write);
    const tool = found(await this.options.tools.find(actor.tenantId, id));
    const kind = toolKindOf(tool.type);
    if (kind.discover === undefined) throw new DomainError('conflict', `Only a tool whose server lists its tools (mcp) discovers them; this one is of type ${tool.type}.`);
    const discovered = await kind.discover(tool, this.options);
    return this.options.em.transactional(async (em) => {
      const current = found(await this.options.tools.findForUpdate(actor.tenantId, id));
      // Saved with another server or headers meanwhile: that save listed its own server's tools.
      if (current.type === tool.type && JSON.stringify(current.config) === JSON.stringify(tool.config)) {
        this.options.tools.setDiscovered(current, discovered, now);
        await em.flush();
      }
      return current;
    });
  }

  /** The tool goes, and with it its id from every agent of the tenant that named it (each moving to its next version). */
  async delete(actor: Actor, id: string, now = new Date()): Promise<void> {
    requireAccess(actor, ACCESS.tools.write);
    const removed = await this.options.em.transactional(() => this.options.tools.delete(actor.tenantId, id, { userId: actor.userId, at: now }));
    if (!removed) throw DomainError.notFound('Tool');
  }

  /** The config as answered: secrets masked. */
  static visibleConfig(tool: Pick<Tool, 'type' | 'config'>): ToolConfig {
    return toolKindOf(tool.type).visible(tool.config);
  }

  /**
   * Every field at fault at once. Then, only when the rest is sound, what the kind must ask
   * elsewhere (the workflow of a workflow tool, the server of an mcp tool).
   */
  private async check(actor: Actor, id: string, request: ToolRequest, current: Tool | undefined): Promise<ToolFields> {
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const description = checkDescription(request.description, errors);
    const type = checkType(request.type, errors);
    const config = parseObject(request.configJson ?? '{}', 'config', errors);
    const kind = type === undefined ? undefined : toolKindOf(type);
    const inputSchema = kind?.schemas === 'discovered' ? refuseInputSchema(type!, request.inputSchemaJson, errors) : checkInputSchema(request.inputSchemaJson, errors);
    const save = { actor, toolId: id, name, stored: current, errors, services: this.options };
    let checked: ToolConfig | undefined;
    if (type !== undefined && kind !== undefined && config !== undefined) {
      checkConfigKeys(type, config, errors);
      checked = await kind.check(config, save);
    }
    errors.throwIfAny();
    const discovered = (await kind!.confirm?.(checked!, save)) ?? null;
    errors.throwIfAny();
    return { name, description, type: type!, config: checked!, inputSchema, requiresApproval: request.requiresApproval ?? false, discovered };
  }

  /** A taken name is a conflict (409), whichever of two racing requests reaches the index second. */
  private async saving<T>(save: () => Promise<T>): Promise<T> {
    try {
      return await save();
    } catch (error) {
      if (isUniqueViolation(error, TOOLS_TENANT_NAME_KEY)) throw new DomainError('conflict', 'A tool of this name already exists in the tenant.', { cause: error });
      throw error;
    }
  }
}

/**
 * decisions §12: saving a tool that acts on the platform needs what its calls need (a workflow
 * tool: workflows:execute), else a credential could arm an agent with what it may not do itself.
 * Before validation, as the route's own check comes first; an unknown type is validation's.
 */
function requireSaveAccess(actor: Actor, request: ToolRequest): void {
  if (isToolType(request.type)) requireToolAccess(actor, request.type);
}

function found(tool: Tool | null): Tool {
  if (!tool) throw DomainError.notFound('Tool');
  return tool;
}
