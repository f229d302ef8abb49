import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import { isUniqueViolation, type EntityManager } from '@agent-platform/kit/db';
import type { OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import { McpServerError, type McpDiscovery, type McpServerAddress } from './mcp-client.js';
import { checkAllowedTools } from './mcp-tool-kind.js';
import {
  checkConfigKeys,
  checkDescription,
  checkHttpConfig,
  checkInputSchema,
  checkMcpConfig,
  checkName,
  checkType,
  checkWorkflowId,
  parseObject,
  refuseInputSchema,
} from './tool-input.js';
import { openHeaders } from './tool-runner.js';
import { maskHeaders, sealHeaders } from './tool-secrets.js';
import { requireToolAccess } from './tool-access.js';
import { isToolType, TOOLS_TENANT_NAME_KEY, type DiscoveredTool, type HttpToolConfig, type McpToolConfig, type Tool, type ToolConfig } from './tools.entity.js';
import type { ToolFields, ToolsRepository } from './tools.repository.js';
import type { WorkflowDirectory } from './workflow-directory.js';

/** A tool as sent: JSON texts as they came, so unknown keys reach validation. */
export interface ToolRequest {
  name: string;
  description: string | undefined;
  type: string;
  configJson: string | undefined;
  inputSchemaJson: string | undefined;
  requiresApproval: boolean | undefined;
}

export interface ToolsServiceOptions {
  em: EntityManager;
  tools: ToolsRepository;
  /** Seals header values at rest (TOOL_SECRET_KEY). */
  secrets: SecretBox;
  /** The SSRF guard of decisions §8.3, as webhook endpoints have it. */
  policy: OutboundPolicy;
  workflows: WorkflowDirectory;
  /** Asks an mcp tool's server for its tools, at save and at refresh. */
  mcp: McpDiscovery;
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
   * Asks an mcp tool's server for its tools again and stores the list. A server that fails is
   * upstream_error, and the stored list stays as it was. allowed_tools is not checked against the
   * new list: a name the server no longer lists is simply not offered.
   */
  async refresh(actor: Actor, id: string, now = new Date()): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.write);
    const tool = found(await this.options.tools.find(actor.tenantId, id));
    if (tool.type !== 'mcp') throw new DomainError('conflict', `Only an mcp tool discovers tools; this one is of type ${tool.type}.`);
    const config = tool.config as McpToolConfig;
    let discovered: DiscoveredTool[];
    try {
      discovered = await this.options.mcp.listTools({ url: config.url, headers: openHeaders(tool, config.headers, this.options.secrets) });
    } catch (error) {
      if (error instanceof McpServerError) throw new DomainError('upstream_error', `The MCP server's tools could not be listed: ${error.message}.`, { cause: error });
      throw error;
    }
    return this.options.em.transactional(async (em) => {
      const current = found(await this.options.tools.findForUpdate(actor.tenantId, id));
      // Saved with another server or headers meanwhile: that save listed its own server's tools.
      if (current.type === 'mcp' && JSON.stringify(current.config) === JSON.stringify(config)) {
        this.options.tools.setDiscovered(current, discovered, now);
        await em.flush();
      }
      return current;
    });
  }

  /** The tool goes, and with it its id from every agent of the tenant that named it. */
  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.tools.write);
    const removed = await this.options.em.transactional(() => this.options.tools.delete(actor.tenantId, id));
    if (!removed) throw DomainError.notFound('Tool');
  }

  /** The config as answered: header values masked. */
  static visibleConfig(tool: Pick<Tool, 'type' | 'config'>): ToolConfig {
    if (tool.type === 'workflow') return tool.config;
    const config = tool.config as HttpToolConfig | McpToolConfig;
    return { ...config, headers: maskHeaders(config.headers) };
  }

  /**
   * Every field at fault at once. Then, only when the rest is sound, what needs asking elsewhere:
   * the workflow of a workflow tool, the server of an mcp tool.
   */
  private async check(actor: Actor, id: string, request: ToolRequest, current: Tool | undefined): Promise<ToolFields> {
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const description = checkDescription(request.description, errors);
    const type = checkType(request.type, errors);
    const config = parseObject(request.configJson ?? '{}', 'config', errors);
    const inputSchema = type === 'mcp' ? refuseInputSchema(request.inputSchemaJson, errors) : checkInputSchema(request.inputSchemaJson, errors);
    const storedHeaders = current?.type === 'http' || current?.type === 'mcp' ? (current.config as HttpToolConfig | McpToolConfig).headers : {};
    let checked: ToolConfig | undefined;
    if (type !== undefined && config !== undefined) {
      checkConfigKeys(type, config, errors);
      if (type === 'http') {
        const http = await checkHttpConfig(config, this.options.policy, errors);
        checked = { url: http.url ?? '', method: http.method, headers: sealHeaders(id, http.headers, storedHeaders, this.options.secrets, errors) };
      } else if (type === 'mcp') {
        const mcp = await checkMcpConfig(config, this.options.policy, errors);
        checked = { url: mcp.url ?? '', headers: sealHeaders(id, mcp.headers, storedHeaders, this.options.secrets, errors), allowed_tools: mcp.allowedTools };
      } else {
        checked = { workflow_id: checkWorkflowId(config, errors) ?? '' };
      }
    }
    errors.throwIfAny();
    const fields: ToolFields = { name, description, type: type!, config: checked!, inputSchema, requiresApproval: request.requiresApproval ?? false, discovered: null };
    if (type === 'workflow') {
      const workflowId = (checked as { workflow_id: string }).workflow_id;
      if (!(await this.options.workflows.exists(actor, workflowId))) {
        throw DomainError.validation([{ field: 'config.workflow_id', message: 'is not a workflow of this tenant' }]);
      }
    }
    if (type === 'mcp') {
      const mcp = checked as McpToolConfig;
      fields.discovered = await this.discover({ url: mcp.url, headers: openHeaders({ id }, mcp.headers, this.options.secrets) });
      checkAllowedTools(name, mcp.allowed_tools, fields.discovered, errors);
      errors.throwIfAny();
    }
    return fields;
  }

  /** At save, a server that cannot be asked is a mistake in the tool, named on its url. */
  private async discover(server: McpServerAddress): Promise<DiscoveredTool[]> {
    try {
      return await this.options.mcp.listTools(server);
    } catch (error) {
      if (error instanceof McpServerError) throw DomainError.validation([{ field: 'config.url', message: `could not list the MCP server's tools: ${error.message}` }]);
      throw error;
    }
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
