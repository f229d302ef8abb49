import type { Execution, RequestBody, ResponseBody, Workflow } from '@agent-platform/client';
import { expect, vi } from 'vitest';
import type { Account, Api } from './client.js';
import { expectStatus } from './results.js';

export type WorkflowInput = RequestBody<'/api/v1/workflows', 'post'>;

// Each helper acts as `account` from `api`'s client IP.

export async function createWorkflow(api: Api, account: Account, body: WorkflowInput): Promise<Workflow> {
  return expectStatus(await api.withToken(account.accessToken).POST('/api/v1/workflows', { body }), 201);
}

export async function activate(api: Api, account: Account, workflowId: string): Promise<void> {
  expectStatus(await api.withToken(account.accessToken).POST('/api/v1/workflows/{workflow_id}/resume', { params: { path: { workflow_id: workflowId } } }));
}

/**
 * The execution a synchronous run answers (200); the execute operation's data is typed as that or
 * the acceptance an asynchronous run answers (202).
 */
export function asExecution(data: Execution | ResponseBody<'/api/v1/workflows/{workflow_id}/execute', 'post', 202>): Execution {
  if (!('node_executions' in data)) throw new Error(`not an execution: ${JSON.stringify(data)}`);
  return data;
}

/** Runs synchronously (`async: false`) and answers the finished execution. */
export async function runSync(api: Api, account: Account, workflowId: string, input: Record<string, unknown> = {}): Promise<Execution> {
  const run = await api.withToken(account.accessToken).POST('/api/v1/workflows/{workflow_id}/execute', {
    params: { path: { workflow_id: workflowId } },
    body: { input, async: false },
  });
  return asExecution(expectStatus(run));
}

/**
 * Asks for the execution until it is no longer running: the REST API waits only for a run it
 * starts (`async: false`), and nothing else announces the end to a test that has no webhook.
 */
export async function finished(api: Api, account: Account, workflowId: string, executionId: string, timeoutMs = 20_000): Promise<Execution> {
  const client = api.withToken(account.accessToken);
  const path = { params: { path: { workflow_id: workflowId, execution_id: executionId } } };
  return vi.waitFor(
    async () => {
      const execution = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', path));
      expect(execution.status, `execution ${executionId}`).not.toBe('running');
      return execution;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

export function nodeStatuses(execution: Execution): Record<string, string> {
  return Object.fromEntries(execution.node_executions.map((node) => [node.node_id, node.status]));
}

/** The path of an inbound address below the gateway (`/hooks/…`), whatever WEBHOOK_HOST says. */
export function hookPath(workflow: Workflow): string {
  return new URL(workflow.webhook_url).pathname;
}
