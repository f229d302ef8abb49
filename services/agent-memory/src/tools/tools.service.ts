import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import { isUniqueViolation, type EntityManager } from '@agent-platform/kit/db';
import type { OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import { checkConfigKeys, checkDescription, checkHttpConfig, checkInputSchema, checkName, checkType, checkWorkflowId, MASKED, parseObject } from './tool-input.js';
import { TOOLS_TENANT_NAME_KEY, type HttpToolConfig, type Tool, type ToolConfig } from './tools.entity.js';
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
}

/** Tools of the actor's tenant (decisions §12): validation, sealing, lifecycle. No events: §8 names none. */
export class ToolsService {
  private readonly options: ToolsServiceOptions;

  constructor(options: ToolsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: ToolRequest, now = new Date()): Promise<Tool> {
    requireAccess(actor, ACCESS.tools.write);
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

  /** The tool goes, and with it its id from every agent of the tenant that named it. */
  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.tools.write);
    const removed = await this.options.em.transactional(() => this.options.tools.delete(actor.tenantId, id));
    if (!removed) throw DomainError.notFound('Tool');
  }

  /** The config as answered: header values masked. */
  static visibleConfig(tool: Pick<Tool, 'type' | 'config'>): ToolConfig {
    if (tool.type !== 'http') return tool.config;
    const config = tool.config as HttpToolConfig;
    return { ...config, headers: Object.fromEntries(Object.keys(config.headers).map((name) => [name, MASKED])) };
  }

  /** Every field at fault at once; the workflow is asked about only when the rest is sound. */
  private async check(actor: Actor, id: string, request: ToolRequest, current: Tool | undefined): Promise<ToolFields> {
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const description = checkDescription(request.description, errors);
    const type = checkType(request.type, errors);
    const config = parseObject(request.configJson ?? '{}', 'config', errors);
    const inputSchema = checkInputSchema(request.inputSchemaJson, errors);
    let checked: ToolConfig | undefined;
    if (type !== undefined && config !== undefined) {
      checkConfigKeys(type, config, errors);
      if (type === 'http') {
        const http = await checkHttpConfig(config, this.options.policy, errors);
        const stored = current?.type === 'http' ? (current.config as HttpToolConfig).headers : {};
        // Entries, not assignments: a header named __proto__ stays a header.
        const headers: [string, string][] = [];
        for (const [header, value] of Object.entries(http.headers)) {
          if (value !== MASKED) headers.push([header, this.options.secrets.seal(value, sealedFor(id, header))]);
          else if (Object.hasOwn(stored, header)) headers.push([header, stored[header]!]);
          else errors.add(`config.headers.${header}`, `is "${MASKED}" but no value is stored under this name; send the value`);
        }
        checked = { url: http.url ?? '', method: http.method, headers: Object.fromEntries(headers) };
      } else {
        const workflowId = checkWorkflowId(config, errors);
        checked = { workflow_id: workflowId ?? '' };
      }
    }
    errors.throwIfAny();
    if (type === 'workflow') {
      const workflowId = (checked as { workflow_id: string }).workflow_id;
      if (!(await this.options.workflows.exists(actor, workflowId))) {
        throw DomainError.validation([{ field: 'config.workflow_id', message: 'is not a workflow of this tenant' }]);
      }
    }
    return { name, description, type: type!, config: checked!, inputSchema, requiresApproval: request.requiresApproval ?? false };
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

/** Binds a sealed header value to its tool and name: copied elsewhere, it does not open. */
export function sealedFor(toolId: string, header: string): string {
  return `${toolId}:${header.toLowerCase()}`;
}

function found(tool: Tool | null): Tool {
  if (!tool) throw DomainError.notFound('Tool');
  return tool;
}
