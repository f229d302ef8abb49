import { createServer } from 'node:net';
import type { LocalConfig } from './config.js';

/** A port the platform must listen on is taken; `variable` is the one that moves it. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(
    readonly variable: string | undefined,
    readonly port: number,
    /** A port found free nearby, to offer in the message. */
    readonly suggestion?: number,
    options?: ErrorOptions,
  ) {
    super(`port ${port} is in use${variable ? ` (${variable})` : ''}`, options);
  }
}

/**
 * Whether nothing listens on `host:port` now (a listener is opened and closed again). Only
 * EADDRINUSE says no: any other refusal (EACCES, a host not on this machine) is left to the real
 * listener to report.
 */
export function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code !== 'EADDRINUSE'));
    probe.listen({ host, port }, () => probe.close(() => resolve(true)));
  });
}

// How far above a taken port a free one is looked for, to suggest in the message.
const SUGGESTION_RANGE = 20;

async function nearbyFreePort(host: string, port: number): Promise<number | undefined> {
  for (let candidate = port + 1; candidate <= Math.min(port + SUGGESTION_RANGE, 65_535); candidate++) {
    if (await portIsFree(host, candidate)) return candidate;
  }
  return undefined;
}

interface FixedPort {
  variable: string;
  host: string;
  port: number;
}

/**
 * The ports this configuration fixes, with the variable that sets each: the gateway's, and any
 * other the user set (unset ones are chosen free at start). 0 asks the system for one: never taken.
 */
export function fixedPorts({ launcher, gateway }: LocalConfig): FixedPort[] {
  const loopback = '127.0.0.1';
  const metricsPort = launcher.METRICS_PORT === 'off' ? undefined : launcher.METRICS_PORT;
  const candidates: { variable: string; host: string; port: number | undefined }[] = [
    { variable: 'PORT', host: gateway.HOST, port: launcher.PORT },
    { variable: 'EMBEDDED_PG_PORT', host: loopback, port: launcher.DATABASE_URL ? undefined : launcher.EMBEDDED_PG_PORT },
    { variable: 'IDENTITY_GRPC_PORT', host: loopback, port: launcher.IDENTITY_GRPC_PORT },
    { variable: 'AGENT_MEMORY_GRPC_PORT', host: loopback, port: launcher.AGENT_MEMORY_GRPC_PORT },
    { variable: 'WEBHOOK_DISPATCHER_GRPC_PORT', host: loopback, port: launcher.WEBHOOK_DISPATCHER_GRPC_PORT },
    { variable: 'WORKFLOW_RUNNER_GRPC_PORT', host: loopback, port: launcher.WORKFLOW_RUNNER_GRPC_PORT },
    { variable: 'WORKFLOW_INGRESS_PORT', host: loopback, port: launcher.WORKFLOW_INGRESS_PORT },
    { variable: 'METRICS_PORT', host: launcher.METRICS_HOST, port: metricsPort },
  ];
  return candidates.filter((candidate): candidate is FixedPort => candidate.port !== undefined && candidate.port !== 0);
}

/**
 * Before anything starts (an embedded PostgreSQL's first start takes seconds): every fixed port
 * must be free, or the start fails at once naming its variable and a free port near it.
 */
export async function ensurePortsFree(config: LocalConfig): Promise<void> {
  for (const { variable, host, port } of fixedPorts(config)) {
    if (!(await portIsFree(host, port))) throw new PortInUseError(variable, port, await nearbyFreePort(host, port));
  }
}
