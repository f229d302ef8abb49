import { DomainError } from '@agent-platform/kit';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect } from 'vitest';
import { expectError, newTenant, runnerTest, type RunnerHarness, type TestTenant } from './support/harness.js';

const test = runnerTest();

const ask = (id: string, agentId: string) => ({ id, type: 'agent', config: { agent_id: agentId, message: 'Hello' } });
const NOT_AN_AGENT = 'is not an agent of this tenant';

function create(runner: RunnerHarness, tenant: TestTenant, nodes: unknown[]) {
  return runner.workflows.createWorkflow({ name: 'Ask', nodesJson: JSON.stringify(nodes), edgesJson: '[]' }, { principal: tenant.principal });
}

describe('agent references checked at save (decisions §13.2)', { timeout: 30_000 }, () => {
  test("an agent of another tenant, or none at all, is 422 naming every node at fault; each agent is asked about once", async ({ runner }) => {
    const tenant = newTenant();
    const other = newTenant();
    const own = runner.agents.add(tenant.tenantId);
    const foreign = runner.agents.add(other.tenantId);
    const nowhere = 'agt_01JD0000000000000000000000';
    const asked = runner.agents.asked.length;
    const error = await expectError(create(runner, tenant, [ask('a', own), ask('b', foreign), ask('c', nowhere), ask('d', foreign)]), 'validation_error');
    expect(error.details).toEqual([
      { field: 'nodes[1].config.agent_id', message: NOT_AN_AGENT },
      { field: 'nodes[2].config.agent_id', message: NOT_AN_AGENT },
      { field: 'nodes[3].config.agent_id', message: NOT_AN_AGENT },
    ]);
    expect(runner.agents.asked.slice(asked).sort()).toEqual([own, foreign, nowhere].map((agent) => `${tenant.tenantId}/${agent}`).sort());
    expect((await runner.workflows.listWorkflows({ page: { page: 1, perPage: 20 } }, { principal: tenant.principal })).total).toBe(0);

    const created = (await create(runner, tenant, [ask('a', own)])).workflow!;
    expect(created.version).toBe(1);
  });

  test('an update naming a foreign agent is refused and changes nothing; one that sends no graph asks nothing', async ({ runner }) => {
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const own = runner.agents.add(tenant.tenantId);
    const foreign = runner.agents.add(newTenant().tenantId);
    const created = (await create(runner, tenant, [ask('a', own)])).workflow!;
    const refused = await expectError(
      runner.workflows.updateWorkflow({ workflowId: created.id, name: 'Other', nodesJson: JSON.stringify([ask('a', own), ask('b', foreign)]) }, as),
      'validation_error',
    );
    expect(refused.details).toEqual([{ field: 'nodes[1].config.agent_id', message: NOT_AN_AGENT }]);
    const kept = (await runner.workflows.getWorkflow({ workflowId: created.id }, as)).workflow!;
    expect(kept).toMatchObject({ name: 'Ask', version: 1 });
    expect(JSON.parse(kept.nodesJson)).toEqual(JSON.parse(created.nodesJson));

    // Deleted since: a rename saves no graph, so it is not asked about.
    runner.agents.delete(tenant.tenantId, own);
    const asked = runner.agents.asked.length;
    expect((await runner.workflows.updateWorkflow({ workflowId: created.id, name: 'Renamed' }, as)).workflow).toMatchObject({ name: 'Renamed', version: 1 });
    expect(runner.agents.asked.length).toBe(asked);
  });

  test('saving an agent node needs what chatting needs (agents:write): 403 for a key without it on create, update and restore, asking nothing', async ({ runner }) => {
    const tenant = newTenant();
    const agent = runner.agents.add(tenant.tenantId);
    const keyWith = (scopes: string[]) => ({ principal: { ...tenant.principal, kind: PrincipalKind.KIND_API_KEY, apiKeyId: 'key_01JD0000000000000000000000', scopes } });
    const workflowsOnly = keyWith(['workflows:read', 'workflows:write', 'workflows:execute']);
    const asked = runner.agents.asked.length;
    const refused = await expectError(
      runner.workflows.createWorkflow({ name: 'Ask', nodesJson: JSON.stringify([ask('a', agent)]), edgesJson: '[]' }, workflowsOnly),
      'forbidden',
    );
    expect(refused.message).toContain('agents:write');
    expect(runner.agents.asked.length).toBe(asked);

    const chatting = keyWith(['workflows:read', 'workflows:write', 'agents:write']);
    const created = (await runner.workflows.createWorkflow({ name: 'Ask', nodesJson: JSON.stringify([ask('a', agent)]), edgesJson: '[]' }, chatting)).workflow!;
    await expectError(runner.workflows.updateWorkflow({ workflowId: created.id, nodesJson: JSON.stringify([ask('b', agent)]) }, workflowsOnly), 'forbidden');
    const plain = (await runner.workflows.updateWorkflow({ workflowId: created.id, nodesJson: JSON.stringify([{ id: 'only', type: 'condition', config: { rules: [] } }]) }, workflowsOnly)).workflow!;
    expect(plain.version).toBe(2);
    await expectError(runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 1 }, workflowsOnly), 'forbidden');
    expect((await runner.workflows.getWorkflow({ workflowId: created.id }, chatting)).workflow!.version).toBe(2);
  });

  test('a graph with other faults is refused for them without asking about its agents', async ({ runner }) => {
    const tenant = newTenant();
    const asked = runner.agents.asked.length;
    const error = await expectError(create(runner, tenant, [ask('a', 'agt_01JD0000000000000000000000'), { id: 'b', type: 'teleport' }]), 'validation_error');
    expect(error.details.map((detail) => detail.field)).toEqual(['nodes[1].type']);
    expect(runner.agents.asked.length).toBe(asked);
  });

  test('restoring a version whose agent was deleted since is 422 and keeps the current version', async ({ runner }) => {
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const agent = runner.agents.add(tenant.tenantId);
    const created = (await create(runner, tenant, [ask('a', agent)])).workflow!;
    const updated = (await runner.workflows.updateWorkflow({ workflowId: created.id, nodesJson: JSON.stringify([{ id: 'only', type: 'condition', config: { rules: [] } }]) }, as)).workflow!;
    expect(updated.version).toBe(2);
    runner.agents.delete(tenant.tenantId, agent);
    const error = await expectError(runner.workflows.restoreWorkflowVersion({ workflowId: created.id, version: 1 }, as), 'validation_error');
    expect(error.details).toEqual([{ field: 'nodes[0].config.agent_id', message: NOT_AN_AGENT }]);
    expect((await runner.workflows.getWorkflow({ workflowId: created.id }, as)).workflow!.version).toBe(2);
    expect((await runner.workflows.listWorkflowVersions({ workflowId: created.id, page: { page: 1, perPage: 20 } }, as)).total).toBe(2);
  });

  test('agent-memory failing is that failure, not a verdict on the graph', async ({ runner, onTestFinished }) => {
    const tenant = newTenant();
    const agent = runner.agents.add(tenant.tenantId);
    runner.agents.failure = new DomainError('service_unavailable', 'agent-memory is unavailable.');
    onTestFinished(() => {
      runner.agents.failure = undefined;
    });
    await expectError(create(runner, tenant, [ask('a', agent)]), 'service_unavailable');
    expect((await runner.workflows.listWorkflows({ page: { page: 1, perPage: 20 } }, { principal: tenant.principal })).total).toBe(0);
  });
});
