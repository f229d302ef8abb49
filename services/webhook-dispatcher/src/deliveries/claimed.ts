import type { TraceCarrier } from '@agent-platform/kit/events';

// What the delivery queue hands a worker: read by the queue that claims it, the worker that sends
// it and the records that write its attempts.

/** A delivery this worker holds the lease of, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: string;
  /** The number this attempt will have. */
  attempt: number;
  maxAttempts: number;
  failsEndpoint: boolean;
  trace: TraceCarrier | null;
}

/**
 * One endpoint leased to this worker with the oldest of its due deliveries, to be sent one after
 * another in this order: a run. The endpoint stays leased until the run's last completion (or a
 * release) hands it back.
 */
export interface ClaimedRun {
  webhookId: string;
  url: string;
  secretSealed: string;
  /** Fences the endpoint's lease: records and hand-backs change only what this token still holds. */
  leaseToken: string;
  /** `performance.now()` just before the claim was sent: the lease runs from no earlier than this. */
  claimedAt: number;
  /** Oldest first. */
  deliveries: ClaimedDelivery[];
}
