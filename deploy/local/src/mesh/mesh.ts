import { freePort } from '@agent-platform/kit';
import { servesAt } from '@agent-platform/kit/grpc';
import type { ServiceName } from '../launcher.js';
import { spawnReplica, type ReplicaProcess } from './replica.js';
import { startTcpBalancer, type TcpBalancer } from './tcp-balancer.js';

/** The parts of the platform, in the order they start: each after the peers it needs at start. */
export const MESH_PARTS = ['identity', 'webhook-dispatcher', 'agent-memory', 'workflow-runner', 'gateway'] as const;
export type MeshPart = (typeof MESH_PARTS)[number];

const HOST = '127.0.0.1';

/** Where a replica listens: its gRPC (or, for the gateway, HTTP) port, and its /metrics. */
export interface ReplicaPorts {
  /** gRPC for a service, HTTP for the gateway. */
  main: number;
  metrics: number;
  /** The workflow-runner's inbound-webhook ingress. */
  ingress?: number;
}

/** What a part needs to know about the others: every replica's address. */
interface Topology {
  targetOf(part: Exclude<MeshPart, 'gateway'>): string;
  ingressUrl: string;
  gatewayUrl: string;
}

interface PartSpec {
  packageDir: string;
  /** Its database, for the services that keep state. */
  database?: ServiceName;
  /** The variables this part needs besides the common ones. */
  env(ports: ReplicaPorts, mesh: Topology, options: MeshOptions): Record<string, string>;
}

/** One table: how each part is started and wired to the others. */
const PARTS: Record<MeshPart, PartSpec> = {
  identity: {
    packageDir: 'services/identity',
    database: 'identity',
    env: (_ports, _mesh, { secrets }) => ({ JWT_KEY_ENCRYPTION_KEY: secrets.jwtKeyEncryptionKey }),
  },
  'webhook-dispatcher': {
    packageDir: 'services/webhook-dispatcher',
    database: 'webhooks',
    env: (_ports, _mesh, { secrets }) => ({ WEBHOOK_SECRET_KEY: secrets.webhookSecretKey }),
  },
  'agent-memory': {
    packageDir: 'services/agent-memory',
    database: 'agents',
    env: (_ports, mesh, { secrets }) => ({
      IDENTITY_ADDR: mesh.targetOf('identity'),
      WORKFLOW_RUNNER_ADDR: mesh.targetOf('workflow-runner'),
      TOOL_SECRET_KEY: secrets.toolSecretKey,
    }),
  },
  'workflow-runner': {
    packageDir: 'services/workflow-runner',
    database: 'workflows',
    env: (ports, mesh) => ({ AGENT_MEMORY_ADDR: mesh.targetOf('agent-memory'), INGRESS_HOST: HOST, INGRESS_PORT: String(ports.ingress) }),
  },
  gateway: {
    packageDir: 'gateway',
    env: (ports, mesh, { redisUrl }) => ({
      HOST,
      PORT: String(ports.main),
      IDENTITY_ADDR: mesh.targetOf('identity'),
      AGENT_MEMORY_ADDR: mesh.targetOf('agent-memory'),
      WEBHOOK_DISPATCHER_ADDR: mesh.targetOf('webhook-dispatcher'),
      WORKFLOW_RUNNER_ADDR: mesh.targetOf('workflow-runner'),
      WORKFLOW_INGRESS_URL: mesh.ingressUrl,
      WEBHOOK_HOST: `${mesh.gatewayUrl}/hooks`,
      REDIS_URL: redisUrl,
    }),
  },
};

export interface MeshSecrets {
  /** Base64 of 32 bytes each. */
  jwtKeyEncryptionKey: string;
  toolSecretKey: string;
  webhookSecretKey: string;
}

export interface MeshOptions {
  /** Replicas of each part (at least 1). */
  replicas: Readonly<Record<MeshPart, number>>;
  /** Each service's database. */
  databaseUrls: Readonly<Record<ServiceName, string>>;
  natsUrl: string;
  redisUrl: string;
  secrets: MeshSecrets;
  /** The front door's port (the gateway's, or a balancer's over several); 0 picks a free one. */
  port: number;
  /** Given to every process (LOG_LEVEL, …). */
  env?: Record<string, string>;
  /** Given to one part's processes (the runner's SMTP peer in the tests). */
  partEnv?: Partial<Record<MeshPart, Record<string, string>>>;
  /** Each line a replica prints, as it prints it. */
  onLine?: (replica: string, line: string) => void;
  /** How long a replica may take to become ready. */
  readyTimeoutMs?: number;
}

export interface MeshReplica {
  readonly part: MeshPart;
  /** `identity-1`, … */
  readonly name: string;
  readonly ports: ReplicaPorts;
  /** The running process; a new one after `start`. */
  readonly process: ReplicaProcess;
  /** What its readiness probe answers now (gRPC health, or the gateway's /readyz). */
  ready(): Promise<boolean>;
  /** Starts it (again, after it stopped or was killed) on the same ports; resolves once it is ready. */
  start(): Promise<void>;
  /** SIGTERM, as Kubernetes sends: it drains, then exits. */
  stop(): Promise<number | null>;
  /** SIGKILL: no drain. */
  kill(): Promise<number | null>;
}

export interface Mesh {
  /** The front door: http://127.0.0.1:<port>. */
  readonly url: string;
  readonly replicas: readonly MeshReplica[];
  /** Every process's /metrics, `host:port`, for a Prometheus to scrape. */
  readonly metricsTargets: readonly string[];
  /** Stops every replica (gateways first, identity last), draining each. */
  stop(): Promise<void>;
}

/** How long a replica may drain before it is killed (above every part's own shutdown bound). */
const STOP_GRACE_MS = 35_000;

/**
 * The platform as separate compiled processes on this machine, as the mesh runs on Kubernetes:
 * `pnpm start:mesh`, and the suites that test the mesh. Every caller gets every replica's address
 * (`ipv4:` targets), so calls spread as they do over headless Services; HTTP traffic to several
 * gateways or workflow ingresses goes through a connection balancer, as through a ClusterIP.
 */
export async function startMesh(options: MeshOptions): Promise<Mesh> {
  for (const part of MESH_PARTS) {
    if (!Number.isInteger(options.replicas[part]) || options.replicas[part] < 1) throw new Error(`${part}: replicas must be a whole number ≥ 1`);
  }
  const ports = new Map<MeshPart, ReplicaPorts[]>();
  for (const part of MESH_PARTS) {
    const own: ReplicaPorts[] = [];
    for (let index = 0; index < options.replicas[part]; index += 1) {
      const single = part === 'gateway' && options.replicas.gateway === 1;
      own.push({
        main: single && options.port !== 0 ? options.port : await freePort(HOST),
        metrics: await freePort(HOST),
        ...(part === 'workflow-runner' ? { ingress: await freePort(HOST) } : {}),
      });
    }
    ports.set(part, own);
  }
  const portsOf = (part: MeshPart) => ports.get(part)!;

  const balancers: TcpBalancer[] = [];
  const balance = async (port: number, backends: number[]) => {
    if (backends.length === 1) return backends[0]!;
    const balancer = await startTcpBalancer(HOST, port, backends);
    balancers.push(balancer);
    return balancer.port;
  };
  const replicas: MeshReplica[] = [];
  const stop = async () => {
    for (const part of [...MESH_PARTS].reverse()) {
      await Promise.all(replicas.filter((replica) => replica.part === part).map((replica) => replica.stop()));
    }
    await Promise.all(balancers.map((balancer) => balancer.close()));
  };

  try {
    const frontPort = await balance(options.port, portsOf('gateway').map((own) => own.main));
    const ingressPort = await balance(0, portsOf('workflow-runner').map((own) => own.ingress!));
    const gatewayUrl = `http://${HOST}:${frontPort}`;
    const topology: Topology = {
      targetOf: (part) => `ipv4:${portsOf(part).map((own) => `${HOST}:${own.main}`).join(',')}`,
      ingressUrl: `http://${HOST}:${ingressPort}`,
      gatewayUrl,
    };
    for (const part of MESH_PARTS) {
      const started = portsOf(part).map((own, index) => {
        const replica = meshReplica(part, index, own, topology, options);
        replicas.push(replica);
        return replica.start();
      });
      await Promise.all(started);
    }
    return {
      url: gatewayUrl,
      replicas,
      metricsTargets: [...ports.values()].flat().map((own) => `${HOST}:${own.metrics}`),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function meshReplica(part: MeshPart, index: number, ports: ReplicaPorts, topology: Topology, options: MeshOptions): MeshReplica {
  const spec = PARTS[part];
  const name = `${part}-${index + 1}`;
  const env: Record<string, string> = {
    ...options.env,
    NATS_URL: options.natsUrl,
    METRICS_PORT: String(ports.metrics),
    ...(spec.database ? { DATABASE_URL: options.databaseUrls[spec.database], GRPC_HOST: HOST, GRPC_PORT: String(ports.main) } : {}),
    ...spec.env(ports, topology, options),
    ...options.partEnv?.[part],
  };
  const ready = () => (part === 'gateway' ? httpReady(`http://${HOST}:${ports.main}/readyz`) : servesAt(`${HOST}:${ports.main}`));
  let current: ReplicaProcess | undefined;
  const replica: MeshReplica = {
    part,
    name,
    ports,
    get process() {
      if (!current) throw new Error(`${name} has not started`);
      return current;
    },
    ready,
    start: async () => {
      if (current && current.child.exitCode === null && current.child.signalCode === null) throw new Error(`${name} is running`);
      current = spawnReplica({ name, packageDir: spec.packageDir, env, onLine: options.onLine });
      await waitReady(name, current, ready, options.readyTimeoutMs ?? 120_000);
    },
    stop: () => current?.stop(STOP_GRACE_MS) ?? Promise.resolve(null),
    kill: () => current?.kill() ?? Promise.resolve(null),
  };
  return replica;
}

async function httpReady(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Probes until ready, as a readiness probe would; fails at once when the process exits. */
async function waitReady(name: string, running: ReplicaProcess, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void running.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${name} exited with ${running.child.exitCode ?? running.child.signalCode} before it was ready:\n${running.output()}`);
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${name} was not ready within ${timeoutMs} ms:\n${running.output()}`);
}
export type { ServiceName } from '../launcher.js';
export { REPLICA_NODE_ARGUMENTS } from './replica.js';
