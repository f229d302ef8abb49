import { z } from 'zod';
import { env } from './config.js';

/**
 * How a process stops on SIGTERM (decisions §18.3): readiness fails at once; HTTP listeners keep
 * taking connections for `delayMs`, so that the load balancers in front (kube-proxy, an ingress)
 * stop sending before they close; then calls, requests and leased work in flight get `graceMs` to
 * finish, and the process exits.
 */
export interface Drain {
  graceMs: number;
  delayMs: number;
}

/** The variables every process reads its drain from; the gateway's schema and runService share them. */
export const drainSettings = {
  SHUTDOWN_GRACE_MS: env.positiveInt(20_000),
  SHUTDOWN_DELAY_MS: env.nonNegativeInt(0),
};

export function drainFrom(parsed: { SHUTDOWN_GRACE_MS: number; SHUTDOWN_DELAY_MS: number }): Drain {
  return { graceMs: parsed.SHUTDOWN_GRACE_MS, delayMs: parsed.SHUTDOWN_DELAY_MS };
}

/** Parses the drain of a process's environment. */
export function loadDrain(environment: Record<string, string | undefined>): Drain {
  return drainFrom(z.object(drainSettings).parse(environment));
}

/** What the all-in-one launcher's services get: nothing balances in front of them, and Ctrl-C should be quick. */
export const IN_PROCESS_DRAIN: Drain = { graceMs: 5_000, delayMs: 0 };

/** Resolves after the drain's delay: HTTP listeners are still open meanwhile, readiness already failing. */
export function readinessPropagated(drain: Drain): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, drain.delayMs));
}
