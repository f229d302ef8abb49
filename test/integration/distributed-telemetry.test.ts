import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, newAccount, type Account } from '../e2e/harness/client.js';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { startDistributedPlatform, type DistributedPlatform } from '../e2e/harness/setup-distributed.js';
import { createWorkflow } from '../e2e/harness/workflows.js';
import { describeTrace, descendsFrom, SPAN_KIND, startOtlpCollector, type OtlpCollector, type OtlpSpan } from '../support/otlp-collector.js';

// The distributed mode as deployed: every service its own compiled process, started with the
// telemetry hook, exporting to a local OTLP collector and serving /metrics.

let collector: OtlpCollector;
let platform: DistributedPlatform | undefined;
let receiver: Receiver;
let api: Api;
let account: Account;

const traceId = randomBytes(16).toString('hex');
const callerSpanId = randomBytes(8).toString('hex');
let executionId = '';
/** Each process's /metrics text, read while the platform runs. */
const exposition: Record<string, string> = {};
/** The trace's spans, once every process has stopped (and so flushed what it held). */
let spans: OtlpSpan[] = [];

beforeAll(async () => {
  collector = await startOtlpCollector();
  receiver = await startReceiver();
  platform = await startDistributedPlatform({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } });
  api = new Api(platform.baseUrl);
  account = await newAccount(api);

  const agent = await api.post<{ id: string }>('/api/v1/agents', { token: account.accessToken, json: { name: 'Helper', type: 'assistant' } });
  expect(agent.status).toBe(201);
  const webhook = await api.post('/api/v1/webhooks', { token: account.accessToken, json: { url: receiver.url('/hooks'), events: ['workflow.execution.completed'] } });
  expect(webhook.status).toBe(201);
  const workflow = await createWorkflow(api, account, {
    name: 'Traced',
    nodes: [
      { id: 'start', type: 'webhook', config: { path: '/traced' } },
      { id: 'ask', type: 'agent', config: { agent_id: agent.body.id, message: 'Summarise order {{ input.order }}' } },
    ],
    edges: [{ source: 'start', target: 'ask' }],
  });

  // One REST call, continuing the caller's trace: everything below must join it.
  const run = await api.post<{ execution_id: string; status: string }>(`/api/v1/workflows/${workflow.id}/execute`, {
    token: account.accessToken,
    json: { input: { order: 'A-17' }, async: false },
    headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  expect(run.body.status).toBe('completed');
  executionId = run.body.execution_id;
  // The sentinel that the event went through the outbox and NATS to the dispatcher's attempt.
  await receiver.waitFor(1, { timeoutMs: 30_000 });

  for (const [service, url] of Object.entries(platform.metricsUrls)) {
    const response = await fetch(url);
    expect(response.status, service).toBe(200);
    exposition[service] = await response.text();
  }
  await platform.stop();
  platform = undefined;
  spans = collector.spans.filter((span) => span.traceId === traceId);
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await receiver.close();
  await collector.close();
});

/** `db.system.name` of the current conventions, or `db.system` of the older ones. */
function dbSystem(span: OtlpSpan): unknown {
  return span.attributes['db.system.name'] ?? span.attributes['db.system'];
}

function only(predicate: (span: OtlpSpan) => boolean, what: string): OtlpSpan {
  const found = spans.filter(predicate);
  expect(found.length, `${what}:\n${describeTrace(spans)}`).toBeGreaterThan(0);
  return found[0]!;
}

describe('a REST call in the distributed mode', () => {
  it('is one connected trace from the caller to the webhook attempt', () => {
    const root = only((span) => span.service === 'gateway' && span.kind === SPAN_KIND.SERVER, 'the gateway request');
    expect(root.parentSpanId).toBe(callerSpanId);
    expect(root.attributes['http.route']).toBe('/api/v1/workflows/:workflow_id/execute');
    // Connected: every span's parent is in the trace, except the root's (the caller's).
    const ids = new Set(spans.map((span) => span.spanId));
    const orphans = spans.filter((span) => span !== root && !ids.has(span.parentSpanId ?? ''));
    expect(orphans.map((span) => `${span.service}: ${span.name}`), describeTrace(spans)).toEqual([]);
    expect(new Set(spans.map((span) => span.service))).toEqual(new Set(['gateway', 'identity', 'workflow-runner', 'agent-memory', 'webhook-dispatcher']));
  });

  it('crosses gRPC, the workflow nodes, the model call, PostgreSQL, the outbox and NATS on the way', () => {
    const rpc = 'grpc.agentplatform.workflows.v1.WorkflowService/ExecuteWorkflow';
    const runnerServer = only((span) => span.service === 'workflow-runner' && span.kind === SPAN_KIND.SERVER && span.name.startsWith('grpc.agentplatform.workflows.v1.'), rpc);
    const gatewayClient = spans.find((span) => span.spanId === runnerServer.parentSpanId);
    expect(gatewayClient?.service).toBe('gateway');
    expect(gatewayClient?.kind).toBe(SPAN_KIND.CLIENT);

    const execution = only((span) => span.name === 'workflow.execute', 'the execution');
    expect(execution.attributes['workflow.execution.id']).toBe(executionId);
    const agentNode = only((span) => span.name === 'workflow.node agent', 'the agent node');
    expect(descendsFrom(agentNode, execution, spans)).toBe(true);

    const chat = only((span) => span.service === 'agent-memory' && span.kind === SPAN_KIND.SERVER && span.name.startsWith('grpc.agentplatform.agents.v1.ChatService/'), 'the chat RPC');
    expect(descendsFrom(chat, agentNode, spans), describeTrace(spans)).toBe(true);
    const model = only((span) => span.name === 'chat offline', 'the model call');
    expect(model.kind).toBe(SPAN_KIND.CLIENT);
    expect(model.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'offline', 'gen_ai.usage.input_tokens': expect.any(Number) });
    expect(descendsFrom(model, chat, spans)).toBe(true);

    only((span) => span.service === 'workflow-runner' && dbSystem(span) === 'postgresql', 'a PostgreSQL query of the runner');
    only((span) => span.service === 'gateway' && dbSystem(span) === 'redis', 'a Redis command of the rate limiter');

    const publish = only((span) => span.kind === SPAN_KIND.PRODUCER && span.name === 'send workflow.execution.completed', 'the outbox publish');
    expect(descendsFrom(publish, execution, spans)).toBe(true);
    // The `started` event went the same way; this is the consumer of the `completed` one.
    const consume = only(
      (span) => span.service === 'webhook-dispatcher' && span.kind === SPAN_KIND.CONSUMER && span.parentSpanId === publish.spanId,
      'the dispatcher consuming the event',
    );
    expect(consume.name).toBe('process workflow.execution.completed');
    const attempt = only((span) => span.service === 'webhook-dispatcher' && span.kind === SPAN_KIND.CLIENT && span.name === 'POST', 'the webhook attempt');
    expect(descendsFrom(attempt, consume, spans)).toBe(true);
  });

  it("never hands the trace to the customer's endpoint", () => {
    expect(receiver.requests[0]?.headers.traceparent).toBeUndefined();
  });

  it('exposes each process its metrics in the Prometheus format', () => {
    const expected: Record<string, string[]> = {
      gateway: ['http_server_request_duration_bucket'],
      identity: ['rpc_server_call_duration_bucket'],
      'workflow-runner': ['workflow_execution_duration_bucket', 'workflow_node_duration_bucket', 'outbox_publish_lag_bucket'],
      'agent-memory': ['gen_ai_client_operation_duration_bucket', 'gen_ai_client_token_usage', 'agent_memory_vector_index_pending', 'rpc_server_call_duration_bucket'],
      'webhook-dispatcher': ['webhook_delivery_attempts', 'webhook_delivery_attempt_duration_bucket'],
    };
    for (const [service, names] of Object.entries(expected)) {
      for (const name of names) expect(exposition[service], `${service} ${name}`).toContain(name);
    }
    expect(exposition['webhook-dispatcher']).toMatch(/webhook_delivery_attempts(_total)?\{[^}]*webhook_delivery_outcome="delivered"/);
    expect(exposition['workflow-runner']).toMatch(/workflow_execution_duration_count\{[^}]*workflow_execution_status="completed"[^}]*\} 1/);
  });
});
