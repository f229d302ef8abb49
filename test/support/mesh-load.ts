import { MESH_PARTS } from '@agent-platform/local/mesh';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { expect, vi } from 'vitest';
import { Api, newAccount, type Account } from '../e2e/harness/client.js';
import { startDistributedPlatform, type DistributedPlatform } from '../e2e/harness/setup-distributed.js';
import { activate, createWorkflow, hookPath } from '../e2e/harness/workflows.js';
import { startHaproxy, type HaproxyFront } from './haproxy.js';

/**
 * Steady mixed traffic through a mesh's front door, as its users send it, and an account of what
 * became of every request: for the suites that restart and kill replicas underneath it.
 */

/** What the load sends, in turn: reads of every service, writes, chat turns, inbound hooks. */
const KINDS = ['read-me', 'read-agents', 'write-memory', 'chat', 'hook', 'read-webhooks', 'read-workflows'] as const;
type Kind = (typeof KINDS)[number];

export interface LoadReport {
  sent: number;
  ok: number;
  /** Statuses by kind: `{ 'read-me': { 200: 410 } }`; 0 is a request that got no answer. */
  statuses: Record<Kind, Record<number, number>>;
  /** Statuses by the phase (`MeshLoad.phase`) the answer came in: a request cut by a fault counts under it. */
  phases: Record<string, Record<number, number>>;
  /** The first answers of 500 or more (or none), for the failure message. */
  failures: string[];
  /** Memory items the platform accepted (201). */
  memoryIds: string[];
  /** Executions inbound hooks started (202). */
  executionIds: string[];
}

export interface MeshLoad {
  /** Requests answered so far (any status). */
  progress(): number;
  /** Answers from now on are counted under this phase (a fault, say) in `phases`. */
  phase(name: string): void;
  /** Stops sending, waits for the requests in flight, and reports. */
  stop(): Promise<LoadReport>;
}

export interface LoadTarget {
  api: Api;
  account: Account;
  agentId: string;
  hook: string;
  workflowId: string;
  receiver: Receiver;
  close(): Promise<void>;
}

/** An account with an agent, an active hook-started workflow and a webhook for its completions. */
export async function prepareLoad(baseUrl: string): Promise<LoadTarget> {
  const api = new Api(baseUrl);
  const account = await newAccount(api);
  const receiver = await startReceiver();
  const client = api.withToken(account.accessToken);
  const agent = await client.POST('/api/v1/agents', { body: { name: 'Under load', type: 'assistant' } });
  expect(agent.response.status).toBe(201);
  const webhook = await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/events'), events: ['workflow.execution.completed'] } });
  expect(webhook.response.status).toBe(201);
  const workflow = await createWorkflow(api, account, {
    name: 'Hooked',
    nodes: [
      { id: 'in', type: 'webhook', config: { path: '/load' } },
      { id: 'done', type: 'condition', config: { rules: [] } },
    ],
    edges: [{ source: 'in', target: 'done' }],
  });
  await activate(api, account, workflow.id);
  return { api, account, agentId: agent.data!.id, hook: hookPath(workflow), workflowId: workflow.id, receiver, close: () => receiver.close() };
}

export interface LoadedMesh {
  platform: DistributedPlatform;
  /** HAProxy in front of the gateways: where the load goes. */
  front: HaproxyFront;
  target: LoadTarget;
  close(): Promise<void>;
}

/**
 * What the mesh's fault suites run on: two replicas of every part, HAProxy health-checking the
 * gateways' `/readyz`, limits lifted, gateways that keep serving 1.5 s after SIGTERM (longer than
 * HAProxy takes to notice), and an account ready for the load.
 */
export async function startLoadedMesh(options: { adminUrl?: string; env?: Record<string, string> } = {}): Promise<LoadedMesh> {
  const platform = await startDistributedPlatform({
    replicas: Object.fromEntries(MESH_PARTS.map((part) => [part, 2])),
    ...(options.adminUrl ? { adminUrl: options.adminUrl } : {}),
    env: { RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0', WELCOME_CREDITS: '1000000', SHUTDOWN_DELAY_MS: '1500', ...options.env },
  });
  const front = await startHaproxy(platform.mesh.replicas.filter((replica) => replica.part === 'gateway').map((replica) => replica.ports.main)).catch(async (error: unknown) => {
    await platform.stop();
    throw error;
  });
  const target = await prepareLoad(front.url);
  return {
    platform,
    front,
    target,
    close: async () => {
      await target.close();
      await front.close();
      await platform.stop();
    },
  };
}

/** `workers` callers, each sending the kinds in turn, one request at a time, until stopped. */
export function startLoad(target: LoadTarget, workers = 6): MeshLoad {
  const report: LoadReport = {
    sent: 0,
    ok: 0,
    statuses: Object.fromEntries(KINDS.map((kind) => [kind, {}])) as LoadReport['statuses'],
    phases: {},
    failures: [],
    memoryIds: [],
    executionIds: [],
  };
  let phase = 'steady';
  const { api, account, agentId, hook } = target;
  const token = account.accessToken;
  let stopped = false;
  let sequence = 0;
  const started = Date.now();
  const send = (kind: Kind) => {
    switch (kind) {
      case 'read-me':
        return api.get('/api/v1/auth/me', { token });
      case 'read-agents':
        return api.get('/api/v1/agents', { token });
      case 'write-memory':
        return api.post<{ id: string }>('/api/v1/memory', { token, json: { agent_id: agentId, memory_type: 'semantic', content: `fact ${(sequence += 1)}` } });
      case 'chat':
        return api.post(`/api/v1/agents/${agentId}/chat`, { token, json: { message: 'How are you?' } });
      case 'hook':
        return api.post<{ execution_id: string }>(hook, { json: { n: (sequence += 1) } });
      case 'read-webhooks':
        return api.get('/api/v1/webhooks', { token });
      case 'read-workflows':
        return api.get('/api/v1/workflows', { token });
    }
  };
  const worker = async (offset: number) => {
    for (let turn = offset; !stopped; turn += 1) {
      const kind = KINDS[turn % KINDS.length]!;
      report.sent += 1;
      const answer = await send(kind).catch((error: unknown) => ({ status: 0, body: { error: String(error) } }));
      const counts = report.statuses[kind];
      counts[answer.status] = (counts[answer.status] ?? 0) + 1;
      const answeredIn = (report.phases[phase] ??= {});
      answeredIn[answer.status] = (answeredIn[answer.status] ?? 0) + 1;
      if (answer.status < 400) report.ok += 1;
      if ((answer.status >= 500 || answer.status === 0) && report.failures.length < 20) report.failures.push(`+${Date.now() - started} ms ${kind} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      const body = answer.body as { id?: string; execution_id?: string };
      if (kind === 'write-memory' && answer.status === 201 && body.id) report.memoryIds.push(body.id);
      if (kind === 'hook' && answer.status === 202 && body.execution_id) report.executionIds.push(body.execution_id);
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  return {
    phase: (name) => {
      phase = name;
    },
    progress: () => Object.values(report.statuses).reduce((sum, counts) => sum + Object.values(counts).reduce((a, b) => a + b, 0), 0),
    stop: async () => {
      stopped = true;
      await running;
      return report;
    },
  };
}

export interface Accounting {
  /** Accepted, and nowhere to be found afterwards. */
  lost: { memory: number; executions: number; deliveries: number };
  /** Accepted once, and there twice: an execution run twice, an event delivered as two different events. */
  repeated: { executions: number; deliveries: number };
  /**
   * An event sent again with the same `webhook-id`: its dispatcher died while the receiver was
   * answering, so the attempt was never recorded (at-least-once, decisions §18.4). Receivers
   * deduplicate by the id; counted, not a loss or a repeat.
   */
  resent: number;
}

/**
 * What became of everything accepted: each memory item is there, each hook's execution completed
 * once, and its completion was delivered to the webhook exactly once.
 */
export async function account(target: LoadTarget, report: LoadReport, timeoutMs = 120_000): Promise<Accounting> {
  const client = target.api.withToken(target.account.accessToken);
  const stored = new Set<string>();
  for (let page = 1; ; page += 1) {
    const { data } = await client.GET('/api/v1/memory', { params: { query: { agent_id: target.agentId, page, per_page: 100 } } });
    for (const item of data!.items) stored.add(item.id);
    if (data!.items.length < 100) break;
  }
  const executions = new Map<string, number>();
  for (let cursor: string | undefined; ; ) {
    const { data } = await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: target.workflowId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
    for (const execution of data!.items) executions.set(execution.id, (executions.get(execution.id) ?? 0) + 1);
    cursor = data!.next_cursor ?? undefined;
    if (!cursor) break;
  }
  // The sentinel: every accepted execution's completion has been delivered (or the wait times out, and the count says what is missing).
  const completed = (id: string) => target.receiver.received().some((request) => request.body.includes(`"execution_id":"${id}"`));
  await vi.waitFor(() => expect(report.executionIds.filter((id) => !completed(id))).toEqual([]), { timeout: timeoutMs, interval: 200 }).catch(() => undefined);
  const deliveriesOf = (id: string) => new Set(target.receiver.received().filter((request) => request.body.includes(`"execution_id":"${id}"`)).map((request) => String(request.headers['webhook-id'])));
  const deliveryIds = target.receiver.received().map((request) => String(request.headers['webhook-id']));
  return {
    lost: {
      memory: report.memoryIds.filter((id) => !stored.has(id)).length,
      executions: report.executionIds.filter((id) => !executions.has(id)).length,
      deliveries: report.executionIds.filter((id) => deliveriesOf(id).size === 0).length,
    },
    repeated: {
      // More executions than hooks that may have started one: accepted, or in doubt (cut off by a
      // fault before the 202 came back, so the execution may exist though nobody heard of it).
      executions: Math.max(0, executions.size - report.executionIds.length - hooksInDoubt(report)),
      deliveries: report.executionIds.filter((id) => deliveriesOf(id).size > 1).length,
    },
    resent: deliveryIds.length - new Set(deliveryIds).size,
  };
}

/** Hook requests answered with no answer or a 5xx: each may have started its execution, or not. */
function hooksInDoubt(report: LoadReport): number {
  return Object.entries(report.statuses.hook).reduce((sum, [status, count]) => sum + (Number(status) === 0 || Number(status) >= 500 ? count : 0), 0);
}

/** One line per figure, as the all-in-one crash tests print them. */
export function describeRun(title: string, report: LoadReport, accounting: Accounting): string {
  const byStatus = new Map<number, number>();
  for (const counts of Object.values(report.statuses)) for (const [status, count] of Object.entries(counts)) byStatus.set(Number(status), (byStatus.get(Number(status)) ?? 0) + count);
  const statuses = [...byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ');
  const phases = Object.entries(report.phases).map(([phase, counts]) => `    ${phase}: ${JSON.stringify(counts)}`);
  return [
    `${title}: sent ${report.sent}, ok ${report.ok}, by status {${statuses}}`,
    ...(phases.length > 1 ? ['  by phase (statuses of the answers that came in it):', ...phases] : []),
    `  accepted: ${report.memoryIds.length} memory items, ${report.executionIds.length} hook executions`,
    `  lost: ${accounting.lost.memory} memory items, ${accounting.lost.executions} executions, ${accounting.lost.deliveries} deliveries; repeated: ${accounting.repeated.executions} executions, ${accounting.repeated.deliveries} deliveries; resent with the same webhook-id: ${accounting.resent}`,
    ...report.failures.map((failure) => `  ${failure}`),
  ].join('\n');
}
