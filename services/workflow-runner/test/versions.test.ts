import { startReceiver, type Answer, type ReceivedRequest } from '@agent-platform/kit/testing';
import type { Workflow } from '@agent-platform/proto/workflows/v1';
import { describe, expect } from 'vitest';
import { expectError, newTenant, runnerTest, type RunnerHarness, type TestTenant } from './support/harness.js';

const test = runnerTest();

/** A graph of one condition node named `id`: enough to tell graphs apart. */
const single = (id: string) => ({ nodes: [{ id, type: 'condition', config: { rules: [] } }], edges: [] });
const WEBHOOK_GRAPH = {
  nodes: [
    { id: 'start', type: 'webhook', config: { path: '/orders' } },
    { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'big' }, { else: 'small' }] } },
    { id: 'big', type: 'condition', config: { rules: [] } },
    { id: 'small', type: 'condition', config: { rules: [] } },
  ],
  edges: [{ source: 'start', target: 'check' }],
};

function graphOf(workflow: { nodesJson?: string; edgesJson?: string }): { nodes: unknown; edges: unknown } {
  return { nodes: JSON.parse(workflow.nodesJson ?? 'null') as unknown, edges: JSON.parse(workflow.edgesJson ?? 'null') as unknown };
}

function put(runner: RunnerHarness, tenant: TestTenant, workflowId: string, change: { name?: string; nodes?: unknown; edges?: unknown }): Promise<Workflow> {
  return runner.workflows
    .updateWorkflow(
      {
        workflowId,
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.nodes === undefined ? {} : { nodesJson: JSON.stringify(change.nodes) }),
        ...(change.edges === undefined ? {} : { edgesJson: JSON.stringify(change.edges) }),
      },
      { principal: tenant.principal },
    )
    .then((answer) => answer.workflow!);
}

async function versionsOf(runner: RunnerHarness, tenant: TestTenant, workflowId: string, page = { page: 1, perPage: 100 }) {
  return runner.workflows.listWorkflowVersions({ workflowId, page }, { principal: tenant.principal });
}

describe('workflow versions', { timeout: 30_000 }, () => {
  test('creation is version 1; a changed graph makes the next; name alone, or the same graph, keeps it', async ({ runner }) => {
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const created = await runner.createWorkflow(tenant, { ...WEBHOOK_GRAPH, name: 'Orders' });
    expect(created.version).toBe(1);
    const listed = await versionsOf(runner, tenant, created.id);
    expect(listed).toEqual({ total: 1, items: [{ version: 1, createdAt: created.createdAt, createdBy: tenant.principal.userId }] });
    const first = (await runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 1 }, as)).version!;
    expect(first).toMatchObject({ version: 1, createdBy: tenant.principal.userId });
    expect(graphOf(first)).toEqual(graphOf(created));

    const changed = await put(runner, tenant, created.id, single('other'));
    expect(changed).toMatchObject({ version: 2, triggerType: 'manual' });
    const second = (await runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 2 }, as)).version!;
    expect(graphOf(second)).toEqual(single('other'));

    expect((await put(runner, tenant, created.id, { name: 'Renamed' })).version).toBe(2);
    // The same graph in other words: keys reordered, a field the platform ignores, edges omitted.
    const same = { nodes: [{ config: { rules: [] }, type: 'condition', id: 'other', position: { x: 1, y: 2 } }] };
    expect((await put(runner, tenant, created.id, same)).version).toBe(2);
    expect((await put(runner, tenant, created.id, { edges: [] })).version).toBe(2);

    const after = await versionsOf(runner, tenant, created.id);
    expect(after.total).toBe(2);
    expect(after.items.map((item) => item.version)).toEqual([2, 1]);
    // The first version's graph is kept as it was.
    expect(graphOf((await runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 1 }, as)).version!)).toEqual(graphOf(created));
  });

  test("restore makes a new version equal to the one restored, with the graph's derived fields, even when it is the current graph", async ({ runner }) => {
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const created = await runner.createWorkflow(tenant, WEBHOOK_GRAPH);
    await put(runner, tenant, created.id, single('other'));
    const restored = (await runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 1 }, as)).workflow!;
    expect(restored).toMatchObject({ version: 3, triggerType: 'webhook', webhookPath: `${created.id}/orders`, status: 'draft' });
    expect(graphOf(restored)).toEqual(graphOf(created));
    const third = (await runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 3 }, as)).version!;
    expect(graphOf(third)).toEqual(graphOf(created));
    expect((await runner.workflows.getWorkflow({ workflowId: created.id }, as)).workflow).toMatchObject({ version: 3, nodesJson: restored.nodesJson });

    // decisions §13: "a new version equal to that one", whatever the current graph is.
    expect((await runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 3 }, as)).workflow!.version).toBe(4);
    expect((await versionsOf(runner, tenant, created.id)).items.map((item) => item.version)).toEqual([4, 3, 2, 1]);
  });

  test('lists newest first by page', async ({ runner }) => {
    const tenant = newTenant();
    const created = await runner.createWorkflow(tenant, single('v1'));
    for (const version of [2, 3, 4, 5]) await put(runner, tenant, created.id, single(`v${version}`));
    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push(await versionsOf(runner, tenant, created.id, { page, perPage: 2 }));
    expect(pages.map((page) => page.items.map((item) => item.version))).toEqual([[5, 4], [3, 2], [1], []]);
    expect(pages.every((page) => page.total === 5)).toBe(true);
    await expectError(versionsOf(runner, tenant, created.id, { page: 1, perPage: 101 }), 'validation_error');
  });

  test('concurrent updates take consecutive versions, none lost and none twice', async ({ runner }) => {
    const tenant = newTenant();
    const created = await runner.createWorkflow(tenant, single('start'));
    const saved = await Promise.all(Array.from({ length: 10 }, (_, index) => put(runner, tenant, created.id, single(`concurrent${index}`))));
    expect(saved.map((workflow) => workflow.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const listed = await versionsOf(runner, tenant, created.id);
    expect(listed.items.map((item) => item.version)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    // Each answer's graph is the version it names.
    for (const workflow of saved) {
      const version = (await runner.workflows.getWorkflowVersion({ workflowId: created.id, version: workflow.version }, { principal: tenant.principal })).version!;
      expect(graphOf(version)).toEqual(graphOf(workflow));
    }
    const current = (await runner.workflows.getWorkflow({ workflowId: created.id }, { principal: tenant.principal })).workflow!;
    expect(current.version).toBe(11);
    expect(graphOf(saved.find((workflow) => workflow.version === 11)!)).toEqual(graphOf(current));
  });

  test("an unknown version, or another tenant's workflow, is not_found; version 0 is no version", async ({ runner }) => {
    const tenant = newTenant();
    const stranger = newTenant();
    const as = { principal: tenant.principal };
    const created = await runner.createWorkflow(tenant, single('only'));
    const missing = await expectError(runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 2 }, as), 'not_found');
    expect(missing.message).toBe('Workflow version not found.');
    await expectError(runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 7 }, as), 'not_found');
    const zero = await expectError(runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 0 }, as), 'validation_error');
    expect(zero.details).toEqual([{ field: 'version', message: 'must be an integer of at least 1' }]);

    const foreign = { principal: stranger.principal };
    for (const error of [
      await expectError(versionsOf(runner, stranger, created.id), 'not_found'),
      await expectError(runner.workflows.getWorkflowVersion({ workflowId: created.id, version: 1 }, foreign), 'not_found'),
      await expectError(runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 1 }, foreign), 'not_found'),
    ]) {
      expect(error.message).toBe('Workflow not found.');
    }
    expect((await runner.workflows.getWorkflow({ workflowId: created.id }, as)).workflow!.version).toBe(1);
  });

  test('a viewer reads versions but cannot restore', async ({ runner }) => {
    const tenant = newTenant();
    const viewer = { principal: { ...tenant.principal, role: 'viewer' } };
    const created = await runner.createWorkflow(tenant, single('only'));
    expect((await runner.workflows.listWorkflowVersions({ workflowId: created.id, page: { page: 1, perPage: 20 } }, viewer)).total).toBe(1);
    await expectError(runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 1 }, viewer), 'forbidden');
  });

  test('deleting a workflow removes its versions', async ({ runner, database }) => {
    const tenant = newTenant();
    const created = await runner.createWorkflow(tenant, single('v1'));
    await put(runner, tenant, created.id, single('v2'));
    const count = async () => (await database.query<{ n: number }>(`select count(*)::int as n from workflow_versions where workflow_id = $1`, [created.id]))[0]?.n;
    expect(await count()).toBe(2);
    await runner.workflows.deleteWorkflow({ workflowId: created.id }, { principal: tenant.principal });
    expect(await count()).toBe(0);
  });
});

describe('executions and versions', { timeout: 30_000 }, () => {
  test('an execution records the version it started on and runs to its end on that graph, whatever is saved meanwhile', async ({ runner }) => {
    const echo = (request: ReceivedRequest): Answer => ({ json: { path: request.path } });
    const peer = await startReceiver((request) => (request.path === '/gate' ? { hold: 'answer', json: { open: true } } : echo(request)));
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    // The gate holds the run after its start; `say` then tells which graph it ran.
    const graph = (say: string) => ({
      nodes: [
        { id: 'gate', type: 'integration', config: { service: 'http', url: peer.url('/gate'), method: 'GET' } },
        { id: 'say', type: 'integration', config: { service: 'http', url: peer.url(say), method: 'GET' } },
      ],
      edges: [{ source: 'gate', target: 'say' }],
    });
    const created = await runner.createWorkflow(tenant, graph('/one'));
    const running = runner.executions.executeWorkflow({ workflowId: created.id, inputJson: '{}', wait: true, waitMs: 30_000 }, as);
    await peer.waitFor(1, { match: '/gate' });
    expect((await put(runner, tenant, created.id, graph('/two'))).version).toBe(2);
    // Later runs pass the gate at once.
    peer.answer(echo);
    expect(peer.release('/gate')).toBe(1);
    const first = (await running).execution!;
    expect(first).toMatchObject({ status: 'completed', workflowVersion: 1 });
    expect(JSON.parse(first.outputJson ?? 'null')).toMatchObject({ body: { path: '/one' } });
    expect(peer.received('/two')).toHaveLength(0);

    const second = await runner.runSync(tenant, created.id);
    expect(second).toMatchObject({ status: 'completed', workflowVersion: 2 });
    expect(JSON.parse(second.outputJson ?? 'null')).toMatchObject({ body: { path: '/two' } });
    // The list and a single read say the same.
    const listed = await runner.executions.listExecutions({ workflowId: created.id, page: { limit: 10 } }, as);
    expect(listed.items.map((item) => item.workflowVersion)).toEqual([2, 1]);
    expect((await runner.executions.getExecution({ workflowId: created.id, executionId: first.id }, as)).execution!.workflowVersion).toBe(1);
  });
});
