import { CHAT_MESSAGE_MAX } from '@agent-platform/kit';
import { onlyKeys, readSeconds, readString } from '../workflows/graph-fields.js';
import { renderConfigTemplate, type NodeKind } from './node-kind.js';

export interface ApprovalConfig {
  /** A template, shown to the people asked and in `workflow.execution.waiting`; '' when none was given. */
  message: string;
  timeout_seconds: number;
}

const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 86_400;

/** decisions §13: parks its execution until someone decides, or rejects it on its time-out. */
export const approvalNode: NodeKind<ApprovalConfig, true> = {
  summary: 'parks the run until a person approves or rejects it, or its time-out passes',
  configHelp: '{message?: template, timeout_seconds?: 1..2592000, default 86400}: waits for POST …/nodes/{node_id}/approve or /reject',
  trigger: false,
  check(config, ctx) {
    onlyKeys(config, ['message', 'timeout_seconds'], ctx, "an approval node's config");
    const message = readString(config, 'message', ctx, { required: false, max: CHAT_MESSAGE_MAX, template: true }) ?? '';
    const timeout = readSeconds(config, 'timeout_seconds', ctx) ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
    return { message, timeout_seconds: timeout };
  },
  // Deciding acts on nothing outside; its record is kept because the execution waits on it.
  hasSideEffects: () => false,
  behaviour: {
    waits: true,
    start(node, scope, now) {
      const wakeAt = new Date(now.getTime() + node.config.timeout_seconds * 1_000);
      const message = node.config.message === '' ? '' : renderConfigTemplate('message', node.config.message, scope);
      const expiresAt = wakeAt.toISOString();
      return { wakeAt, output: { message, expires_at: expiresAt }, announce: { node_id: node.id, message, expires_at: expiresAt } };
    },
    due: () => ({ approved: false, timed_out: true }),
  },
};

/** decisions §13: the output of an approval node someone decided. */
export function decisionOutput(approved: boolean, decidedBy: string, comment: string | null, decidedAt: Date): unknown {
  return { approved, decided_by: decidedBy, comment, decided_at: decidedAt.toISOString() };
}
