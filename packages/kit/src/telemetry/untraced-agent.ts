import type { Agent } from 'node:http';

// A registered symbol, not a module-level set: the instrumentation's hook and the agents' makers
// may load this module from two copies of kit (source and build), and must still agree.
const UNTRACED = Symbol.for('@agent-platform/kit/telemetry.untraced-agent');

/**
 * Marks an agent whose requests the HTTP instrumentation leaves alone: no span, no metric, and no
 * `traceparent` added. For requests to parties outside the platform, whose headers are a
 * documented contract and whose callers trace and measure them (a delivery attempt, a node).
 */
export function untracedAgent<T extends Agent>(agent: T): T {
  Object.defineProperty(agent, UNTRACED, { value: true });
  return agent;
}

export function isUntracedAgent(agent: unknown): boolean {
  return typeof agent === 'object' && agent !== null && (agent as Record<symbol, unknown>)[UNTRACED] === true;
}
