import { expect } from 'vitest';
import type { Account, Api } from './client.js';

export interface WorkflowBody {
  id: string;
  name: string;
  description: string | null;
  status: string;
  trigger_type: string;
  nodes: { id: string; type: string; config: Record<string, unknown> }[];
  edges: { source: string; target: string }[];
  webhook_url: string;
  last_run_at: string | null;
  statistics: { total_runs: number; success_rate: number; avg_duration: string };
  created_at: string;
  updated_at: string;
}

export interface NodeExecutionBody {
  node_id: string;
  status: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  output?: unknown;
  error: string | null;
}

export interface ExecutionBody {
  id: string;
  execution_id: string;
  workflow_id: string;
  status: string;
  trigger: string;
  input: unknown;
  output: unknown;
  error: { node_id: string | null; message: string } | null;
  node_executions: NodeExecutionBody[];
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
}

export async function createWorkflow(api: Api, account: Account, json: Record<string, unknown>): Promise<WorkflowBody> {
  const created = await api.post<WorkflowBody>('/api/v1/workflows', { token: account.accessToken, json });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

export async function activate(api: Api, account: Account, workflowId: string): Promise<void> {
  const resumed = await api.post(`/api/v1/workflows/${workflowId}/resume`, { token: account.accessToken });
  expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
}

/** Runs synchronously (`async: false`) and answers the finished execution. */
export async function runSync(api: Api, account: Account, workflowId: string, input: Record<string, unknown> = {}): Promise<ExecutionBody> {
  const run = await api.post<ExecutionBody>(`/api/v1/workflows/${workflowId}/execute`, { token: account.accessToken, json: { input, async: false } });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  return run.body;
}

/** Polls the execution until it is no longer running. */
export async function finished(api: Api, account: Account, workflowId: string, executionId: string, timeoutMs = 20_000): Promise<ExecutionBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await api.get<ExecutionBody>(`/api/v1/workflows/${workflowId}/executions/${executionId}`, { token: account.accessToken });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    if (read.body.status !== 'running') return read.body;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still running after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function nodeStatuses(execution: ExecutionBody): Record<string, string> {
  return Object.fromEntries(execution.node_executions.map((node) => [node.node_id, node.status]));
}

/** The path of an inbound address below the gateway (`/hooks/…`), whatever WEBHOOK_HOST says. */
export function hookPath(workflow: WorkflowBody): string {
  return new URL(workflow.webhook_url).pathname;
}
