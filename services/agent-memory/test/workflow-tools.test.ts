import { newId, type Actor } from '@agent-platform/kit';
import { GrpcChannel, PrincipalKind } from '@agent-platform/kit/grpc';
import { startReceiver, type TestDatabase } from '@agent-platform/kit/testing';
import { ExecutionServiceService } from '@agent-platform/proto/workflows/v1';
import { describe, expect } from 'vitest';
import type { ToolCallRequest } from '../src/tools/kinds/tool-kind.js';
import { workflowCalls } from '../src/tools/kinds/workflow.js';
import { Tool } from '../src/tools/tools.entity.js';
import { actorOf, databaseTest, principalOf, startAgentMemory, type AgentMemoryHarness, type TestTenant } from './support/harness.js';
import { startWorkflowRunner, workflowsDatabase, type WorkflowRunnerPeer } from './support/workflow-runner.js';

/**
 * The real workflow-runner, on its own database, with a WorkflowToolKind calling it over gRPC as
 * agent-memory does; and agent-memory itself, whose wired ToolRunner the last tests go through.
 * Both may reach loopback receivers (the workflows' http nodes, the http tools).
 */
const test = databaseTest
  .extend('workflowsDb', { scope: 'file' }, workflowsDatabase)
  .extend('platform', { scope: 'file' }, async ({ database, workflowsDb }, { onCleanup }) => {
    let runner: WorkflowRunnerPeer | undefined;
    const service = await startAgentMemory(database, {
      env: { ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: '10000' },
      workflowRunner: () => {
        if (!runner) throw new Error('workflow-runner is not up yet');
        return runner.address;
      },
    });
    try {
      runner = await startWorkflowRunner(workflowsDb.url, { ALLOW_PRIVATE_NETWORK_URLS: 'true' });
    } catch (error) {
      await service.stop();
      throw error;
    }
    const started = runner;
    const channel = new GrpcChannel(started.address, { defaultDeadlineMs: 5_000 });
    const kind = workflowCalls({ executions: () => channel.client(ExecutionServiceService), timeoutMs: 10_000 });
    onCleanup(async () => {
      channel.close();
      await service.stop();
      await started.stop();
    });
    return { service, runner: started, kind };
  });

function workflowTool(tenantId: string, workflowId: string): Tool {
  const now = new Date();
  return Object.assign(new Tool(), {
    id: newId('tool'),
    tenantId,
    name: 'greet',
    description: null,
    type: 'workflow' as const,
    config: { workflow_id: workflowId },
    inputSchema: { type: 'object' },
    requiresApproval: false,
    createdAt: now,
    updatedAt: now,
  });
}

function requestOf(actor: Actor, tool: Tool, args: Record<string, unknown>, deadlineAt = Date.now() + 10_000): ToolCallRequest {
  return { actor, tool, remoteName: undefined, arguments: args, signal: new AbortController().signal, requestId: 'req_workflow_tools', deadlineAt };
}

/** One http node POSTing a body computed from the input: the workflow's output depends on it. */
function greetingNodes(url: string) {
  return [{ id: 'call', type: 'integration', config: { service: 'http', url, method: 'POST', body: { greeting: 'Hello, {{ input.name }}' } } }];
}

/** The tool as stored (sealed headers included), as the chat turn reads it. */
async function storedTool(database: TestDatabase, id: string): Promise<Tool> {
  const [row] = await database.query<{ tenant_id: string; name: string; type: 'http' | 'workflow'; config: Tool['config']; input_schema: Record<string, unknown>; updated_at: Date }>(
    `select "tenant_id", "name", "type", "config", "input_schema", "updated_at" from "tools" where "id" = $1`,
    [id],
  );
  return Object.assign(new Tool(), {
    id,
    tenantId: row!.tenant_id,
    name: row!.name,
    description: null,
    type: row!.type,
    config: row!.config,
    inputSchema: row!.input_schema,
    requiresApproval: false,
    createdAt: row!.updated_at,
    updatedAt: row!.updated_at,
  });
}

async function turnOf(service: AgentMemoryHarness, actor: Actor, tool: Tool, args: unknown) {
  return service.toolRunner.run({ actor, tool, remoteName: undefined, arguments: args, signal: new AbortController().signal, requestId: undefined });
}

describe('workflow tools', { timeout: 30_000 }, () => {
  test("runs the workflow with the arguments as input and trigger `tool`, and answers the execution's output", async ({ platform: { runner, kind } }) => {
    const peer = await startReceiver((request) => ({ json: request.json }));
    const tenant = principalTenant();
    const workflowId = await runner.createWorkflow(tenant, greetingNodes(peer.url('/greet')));
    const outcome = await kind.call(requestOf(actorOf(tenant), workflowTool(tenant.tenantId, workflowId), { name: 'Ann', orders: 3 }));
    expect(outcome).toEqual({ status: 'completed', result: { status: 200, headers: expect.any(Object), body: { greeting: 'Hello, Ann' } } });

    const { items } = await runner.executions.listExecutions({ workflowId, page: { limit: 10 } }, { principal: tenant.principal });
    expect(items.map((item) => [item.trigger, item.status])).toEqual([['tool', 'completed']]);
    const { execution } = await runner.executions.getExecution({ workflowId, executionId: items[0]!.id }, { principal: tenant.principal });
    expect(JSON.parse(execution!.inputJson)).toEqual({ name: 'Ann', orders: 3 });
  });

  test("runs as the turn's own credential: workflow-runner itself refuses a key without workflows:execute, and nothing starts", async ({ platform: { runner, kind } }) => {
    const peer = await startReceiver((request) => ({ json: request.json }));
    const tenant = principalTenant();
    const workflowId = await runner.createWorkflow(tenant, greetingNodes(peer.url('/greet')));
    // The runner's TOOL_ACCESS check comes first in a turn; this is the callee's own, as every service makes one.
    const chatOnly = actorOf(tenant, { kind: 'api_key', scopes: ['agents:write'] });
    await expect(kind.call(requestOf(chatOnly, workflowTool(tenant.tenantId, workflowId), { name: 'Bo' }))).rejects.toMatchObject({ code: 'forbidden', message: expect.stringContaining('workflows:execute') as unknown });
    expect((await runner.executions.listExecutions({ workflowId, page: { limit: 10 } }, { principal: tenant.principal })).total).toBe(0);
    expect(peer.requests).toHaveLength(0);
    const executing = actorOf(tenant, { kind: 'api_key', scopes: ['agents:write', 'workflows:execute'] });
    expect(await kind.call(requestOf(executing, workflowTool(tenant.tenantId, workflowId), { name: 'Bo' }))).toMatchObject({ status: 'completed', result: { body: { greeting: 'Hello, Bo' } } });
  });

  test('a failing workflow is a failed call naming the execution, the node and the reason', async ({ platform: { runner, kind } }) => {
    const peer = await startReceiver({ status: 500, body: 'database is down' });
    const tenant = principalTenant();
    const workflowId = await runner.createWorkflow(tenant, greetingNodes(peer.url('/greet')));
    const outcome = await kind.call(requestOf(actorOf(tenant), workflowTool(tenant.tenantId, workflowId), { name: 'Ann' }));
    expect(outcome).toEqual({ status: 'failed', error: expect.stringMatching(/^workflow execution exe_\w+ failed: node call: HTTP 500 from 127\.0\.0\.1:\d+: database is down$/) });
  });

  test("another tenant's workflow cannot be run: not found, and nothing starts", async ({ platform: { runner, kind } }) => {
    const peer = await startReceiver((request) => ({ json: request.json }));
    const owner = principalTenant();
    const stranger = principalTenant();
    const workflowId = await runner.createWorkflow(owner, greetingNodes(peer.url('/greet')));
    const outcome = await kind.call(requestOf(actorOf(stranger), workflowTool(stranger.tenantId, workflowId), { name: 'Eve' }));
    expect(outcome).toEqual({ status: 'failed', error: `workflow ${workflowId} was not found in this tenant` });
    expect((await runner.executions.listExecutions({ workflowId, page: { limit: 10 } }, { principal: owner.principal })).total).toBe(0);
    expect(peer.requests).toHaveLength(0);
  });

  test('a run that outlasts the time left is a failed call naming the execution, which goes on running', async ({ platform: { runner, kind } }) => {
    const peer = await startReceiver({ hold: 'answer', json: { late: true } });
    const tenant = principalTenant();
    const workflowId = await runner.createWorkflow(tenant, greetingNodes(peer.url('/greet')));
    const outcome = await kind.call(requestOf(actorOf(tenant), workflowTool(tenant.tenantId, workflowId), { name: 'Ann' }, Date.now() + 1_000));
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringMatching(/^still running after \d+ ms; execution exe_\w+$/) });
    const executionId = /execution (exe_\w+)$/.exec((outcome as { error: string }).error)![1]!;
    const { execution } = await runner.executions.getExecution({ workflowId, executionId }, { principal: tenant.principal });
    expect(execution).toMatchObject({ status: 'running', trigger: 'tool' });
    expect(peer.release()).toBe(1);
  });

  test('a paused workflow is a failed call saying so', async ({ platform: { runner, kind } }) => {
    const tenant = principalTenant();
    const workflowId = await runner.createWorkflow(tenant, greetingNodes('https://api.example.com/greet'));
    await runner.workflows.pauseWorkflow({ workflowId }, { principal: tenant.principal });
    expect(await kind.call(requestOf(actorOf(tenant), workflowTool(tenant.tenantId, workflowId), {}))).toEqual({ status: 'failed', error: 'The workflow is paused; resume it to run it.' });
  });

  test("agent-memory's own tool runner runs tools saved through its API: workflow and http", async ({ platform: { service, runner }, database }) => {
    const peer = await startReceiver((request) => ({ json: { echoed: request.json ?? null, path: request.path } }));
    const tenant = principalTenant();
    const actor = actorOf(tenant);
    const workflowId = await runner.createWorkflow(tenant, greetingNodes(peer.url('/greet')));
    const schema = JSON.stringify({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    const saved = async (type: string, config: object) =>
      (await service.tools.createTool({ name: `${type}_tool`, type, configJson: JSON.stringify(config), inputSchemaJson: schema }, { principal: tenant.principal })).tool!.id;

    const workflow = await storedTool(database, await saved('workflow', { workflow_id: workflowId }));
    expect(await turnOf(service, actor, workflow, { name: 'Cy' })).toMatchObject({ status: 'completed', result: { body: { echoed: { greeting: 'Hello, Cy' } } }, durationMs: expect.any(Number) });

    const http = await storedTool(database, await saved('http', { url: peer.url('/lookup'), method: 'GET', headers: { Authorization: 'Bearer sk-live-9' } }));
    expect(await turnOf(service, actor, http, { name: 'Cy' })).toMatchObject({ status: 'completed', result: { echoed: null, path: '/lookup?name=Cy' } });
    expect(peer.received('/lookup?name=Cy')[0]!.headers.authorization).toBe('Bearer sk-live-9');
    expect(await turnOf(service, actor, http, { name: 7 })).toMatchObject({ status: 'failed', error: 'arguments do not match the input schema: arguments/name must be string' });
  });
});

/** A tenant with a member user, the principal the workflows are created as. */
function principalTenant(): TestTenant {
  const tenantId = newId('tenant');
  return { tenantId, principal: principalOf(tenantId, 'member', PrincipalKind.KIND_USER) };
}
