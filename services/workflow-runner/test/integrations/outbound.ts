import { onTestFinished } from 'vitest';
import { OutboundHttp, OutboundPolicy } from '@agent-platform/kit/security';

/**
 * A guarded client closed when the test finishes. Tests reach their peers on loopback, so they
 * need the development allowance; `allowPrivateNetworks: false` is production's guard.
 */
export function outboundHttp(allowPrivateNetworks = true): OutboundHttp {
  const http = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks }), userAgent: 'AgentPlatform-Workflows/test' });
  onTestFinished(() => http.close());
  return http;
}

/** A context for one node: a fresh signal, and a time-out generous enough not to matter unless set. */
export function context(overrides: { signal?: AbortSignal; timeoutMs?: number } = {}): { signal: AbortSignal; timeoutMs: number } {
  return { signal: overrides.signal ?? new AbortController().signal, timeoutMs: overrides.timeoutMs ?? 5_000 };
}

/** The rejection of `promise` (failing the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof Error)) throw new Error(`expected an Error, got ${String(outcome.error)}`);
  return outcome.error;
}
