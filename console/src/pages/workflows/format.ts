/** Execution statuses after which nothing changes any more (decisions §7). */
export const FINAL_EXECUTION_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled'];
