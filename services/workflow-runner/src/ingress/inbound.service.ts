import { DomainError } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { InboundRequest } from '../executions/executions.entity.js';
import type { ExecutionsService } from '../executions/executions.service.js';
import { Workflow } from '../workflows/workflows.entity.js';

export interface InboundDelivery {
  workflowId: string;
  /** What follows the workflow id in the address ('' or '/…'). */
  path: string;
  /** The raw body; empty means `{}`. */
  body: Buffer;
  query: InboundRequest['query'];
  headers: InboundRequest['headers'];
}

export interface InboundServiceOptions {
  em: EntityManager;
  executions: ExecutionsService;
}

/**
 * Inbound webhooks (decisions §7): a POST to `{WEBHOOK_HOST}/{workflow_id}{path}` with a JSON body
 * starts an execution of an `active` workflow with the body as `input`, and the request's query
 * and headers as `request`. Any other workflow, state or path is not_found: an address reveals
 * nothing about what is behind it.
 */
export class InboundService {
  private readonly options: InboundServiceOptions;

  constructor(options: InboundServiceOptions) {
    this.options = options;
  }

  /** The tenant an active workflow's inbound address belongs to (for rate limits before forwarding). */
  async resolve(workflowId: string): Promise<string> {
    return (await this.activeWorkflow(workflowId)).tenantId;
  }

  async receive(delivery: InboundDelivery): Promise<{ executionId: string; workflowId: string }> {
    const workflow = await this.activeWorkflow(delivery.workflowId);
    if (delivery.path !== (workflow.webhookPath ?? '')) throw DomainError.notFound('Inbound webhook');
    const input = parseBody(delivery.body);
    const execution = await this.options.executions.startNow(workflow, 'webhook', input, { query: delivery.query, headers: delivery.headers });
    return { executionId: execution.id, workflowId: workflow.id };
  }

  private async activeWorkflow(workflowId: string): Promise<Workflow> {
    const workflow = /^wf_[0-9A-HJKMNP-TV-Z]{26}$/.test(workflowId) ? await this.options.em.fork().findOne(Workflow, { id: workflowId }) : null;
    if (!workflow || workflow.status !== 'active') throw DomainError.notFound('Inbound webhook');
    return workflow;
  }
}

function parseBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError('invalid_request', 'The body is not valid JSON.');
  }
}
