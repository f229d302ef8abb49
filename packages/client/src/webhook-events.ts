import type { Agent } from './types.js';

/**
 * The event catalogue (docs/api.md, Events; decisions §8): every type a webhook can subscribe to (or `*` for
 * all). Written by hand: the OpenAPI document describes the REST operations, not the deliveries.
 */
export const WEBHOOK_EVENT_TYPES = [
  'agent.message.created',
  'agent.message.completed',
  'agent.tool_call.approval_requested',
  'agent.created',
  'agent.updated',
  'workflow.execution.started',
  'workflow.execution.completed',
  'workflow.execution.failed',
  'workflow.execution.waiting',
  'run.completed',
  'run.failed',
  'eval.completed',
  'memory.consolidated',
  'memory.updated',
  'document.ready',
  'document.failed',
  'billing.credits.low',
  'billing.purchase.completed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

interface ChatTurnData {
  agent_id: string;
  /** The chat session's id (`ses_…`). */
  conversation_id: string;
  message_id: string;
  content: string;
}

interface ExecutionData {
  execution_id: string;
  workflow_id: string;
  status: string;
  /** Milliseconds; 0 when the execution has just started. */
  duration_ms: number;
}

/** The `data` of each event type. */
export interface WebhookEventData {
  /** The user's message was accepted. */
  'agent.message.created': ChatTurnData & { role: 'user' };
  /** The agent's reply is ready. */
  'agent.message.completed': ChatTurnData & { tokens_used: number; latency_ms: number };
  /** A turn stopped at a call of a tool that needs approval; approve or reject it to continue. */
  'agent.tool_call.approval_requested': { agent_id: string; session_id: string; call_id: string; name: string; arguments: unknown };
  'agent.created': Agent;
  'agent.updated': Agent;
  'workflow.execution.started': ExecutionData & { status: 'running' };
  'workflow.execution.completed': ExecutionData & { status: 'completed' };
  'workflow.execution.failed': ExecutionData & { status: 'failed'; error: { node_id: string; message: string } };
  /** An approval node waits for a decision: approve or reject it before `expires_at`. */
  'workflow.execution.waiting': { execution_id: string; workflow_id: string; node_id: string; message: string; expires_at: string };
  /** A background run (decisions §16) ended with its answer (`output`). */
  'run.completed': { run_id: string; agent_id: string; session_id: string | null; status: 'completed'; output: string; credits: number; duration_ms: number };
  /** A background run ended without one: `error` says why (a §2 code and text). */
  'run.failed': { run_id: string; agent_id: string; session_id: string | null; status: 'failed'; error: { code: string; message: string }; credits: number; duration_ms: number };
  /** Every item of an eval (decisions §16) is scored: its summary, per scorer. */
  'eval.completed': {
    eval_id: string;
    agent_id: string;
    agent_version: number;
    dataset_id: string;
    status: 'completed';
    items: number;
    passed: number;
    failed_runs: number;
    scorers: { name: string; type: string; mean: number | null; pass_rate: number | null }[];
    credits: number;
    duration_ms: number;
  };
  'memory.consolidated': { agent_id: string; memory_type: string; items_in: number; items_out: number };
  'memory.updated': { agent_id: string; session_id: string; user_id: string | null; added: number; updated: number; deleted: number };
  /** A document (decisions §17) was parsed: first, after a refresh someone asked for, or when a page's text changed (`changed`). */
  'document.ready': { document_id: string; agent_id: string; title: string | null; source: 'text' | 'upload' | 'url'; url: string | null; chunks: number; pages: number | null; changed: boolean };
  /** Parsing or fetching failed for good: `status` failed (nothing stored), or ready (a refresh failed; the document keeps what it had). */
  'document.failed': { document_id: string; agent_id: string; title: string | null; source: 'text' | 'upload' | 'url'; url: string | null; status: 'failed' | 'ready'; error: string | null };
  /** A debit took the balance from at least `threshold` to below it. */
  'billing.credits.low': { balance: number; threshold: number };
  'billing.purchase.completed': { purchase_id: string; credits: number; balance: number };
}

/** The envelope every delivery carries, for one event type. */
export interface WebhookEventOf<Type extends WebhookEventType> {
  /** `evt_…`; deliveries are at least once, so receivers de-duplicate on it. */
  id: string;
  type: Type;
  /** ISO 8601 UTC with milliseconds. */
  created_at: string;
  data: WebhookEventData[Type];
  tenant_id: string;
  /** The date-form version of the event shapes, e.g. `2026-11-01`. */
  api_version: string;
}

/** A delivered event: switch on `type` and `data` narrows to that type's shape. */
export type WebhookEvent = { [Type in WebhookEventType]: WebhookEventOf<Type> }[WebhookEventType];
