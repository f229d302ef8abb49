import { DomainError, isId } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { LRUCache } from 'lru-cache';
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

/** How long a workflow read for inbound requests is reused (ms); acceptance re-checks it anyway. */
const WORKFLOW_TTL_MS = 10_000;

/**
 * Inbound webhooks (decisions §7): a POST to `{WEBHOOK_HOST}/{workflow_id}{path}` with a JSON body
 * starts an execution of an `active` workflow with the body as `input`, and the request's query
 * and headers as `request`. Any other workflow, state or path is not_found: an address reveals
 * nothing about what is behind it. The workflow is read from a short cache, and the execution is
 * accepted only if the workflow is still active and at the version read — in the same statement
 * that records it — so a hot address costs one write, and a pause or an edit is never missed.
 */
export class InboundService {
  private readonly options: InboundServiceOptions;
  private readonly workflows = new LRUCache<string, Workflow>({ max: 10_000, ttl: WORKFLOW_TTL_MS });

  constructor(options: InboundServiceOptions) {
    this.options = options;
  }

  /** The tenant an active workflow's inbound address belongs to (for rate limits before forwarding). */
  async resolve(workflowId: string): Promise<string> {
    return (await this.activeWorkflow(workflowId, true)).tenantId;
  }

  async receive(delivery: InboundDelivery): Promise<{ executionId: string; workflowId: string }> {
    let workflow = await this.activeWorkflow(delivery.workflowId, false);
    const input = this.checkDelivery(workflow, delivery);
    const request = { query: delivery.query, headers: delivery.headers };
    let execution = await this.options.executions.start(workflow, 'webhook', input, request, { whileActive: true });
    if (!execution) {
      // The cached read was stale (paused, edited or deleted since): decide on the current one.
      workflow = await this.activeWorkflow(delivery.workflowId, true);
      this.checkDelivery(workflow, delivery);
      execution = await this.options.executions.start(workflow, 'webhook', input, request, { whileActive: true });
    }
    if (!execution) throw DomainError.notFound('Inbound webhook');
    return { executionId: execution.id, workflowId: workflow.id };
  }

  /** The path must be the webhook node's; then the body must be JSON. */
  private checkDelivery(workflow: Workflow, delivery: InboundDelivery): unknown {
    if (delivery.path !== (workflow.webhookPath ?? '')) throw DomainError.notFound('Inbound webhook');
    return parseBody(delivery.body);
  }

  /** Only active workflows are remembered: anything else is read again, so a resume counts at once. */
  private async activeWorkflow(workflowId: string, fresh: boolean): Promise<Workflow> {
    const cached = fresh ? undefined : this.workflows.get(workflowId);
    if (cached) return cached;
    const workflow = isId('workflow', workflowId) ? await this.options.em.fork().findOne(Workflow, { id: workflowId }) : null;
    if (!workflow || workflow.status !== 'active') {
      this.workflows.delete(workflowId);
      throw DomainError.notFound('Inbound webhook');
    }
    this.workflows.set(workflowId, workflow);
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
