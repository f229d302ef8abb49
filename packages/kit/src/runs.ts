// decisions §16: the words a run is described with, shared by the service that keeps runs and the
// gateway that documents and checks them.

/** What started a run. */
export const RUN_TRIGGERS = ['chat', 'stream', 'background', 'mcp', 'workflow', 'agent', 'eval'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_STEP_TYPES = ['retrieval', 'model', 'tool', 'approval', 'extraction'] as const;
export type RunStepType = (typeof RUN_STEP_TYPES)[number];

/**
 * Runs that a worker claims and holds by a lease, not a caller's request: background runs, and
 * the runs of an eval's items. A replica that stops leaves them to another (decisions §16).
 */
export const LEASED_TRIGGERS = ['background', 'eval'] as const satisfies readonly RunTrigger[];
export type LeasedTrigger = (typeof LEASED_TRIGGERS)[number];

export function isLeasedTrigger(trigger: RunTrigger): trigger is LeasedTrigger {
  return (LEASED_TRIGGERS as readonly RunTrigger[]).includes(trigger);
}
