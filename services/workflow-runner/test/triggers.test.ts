import { describe, expect } from 'vitest';
import { databaseTest, expectError, newTenant, startRunner } from './support/harness.js';

describe('what started an execution', { timeout: 30_000 }, () => {
  databaseTest('execute records trigger `tool` when told, `manual` otherwise; get and list show it', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }] });
    const run = async (trigger: string | undefined) =>
      (await runner.executions.executeWorkflow({ workflowId: workflow.id, inputJson: '{"order_id":"A-1"}', wait: true, waitMs: 10_000, ...(trigger === undefined ? {} : { trigger }) }, as)).execution!;

    const byTool = await run('tool');
    expect(byTool).toMatchObject({ status: 'completed', trigger: 'tool', inputJson: '{"order_id":"A-1"}' });
    expect((await run(undefined)).trigger).toBe('manual');
    expect((await run('')).trigger).toBe('manual');
    expect((await run('manual')).trigger).toBe('manual');

    expect((await runner.executions.getExecution({ workflowId: workflow.id, executionId: byTool.id }, as)).execution!.trigger).toBe('tool');
    const listed = await runner.executions.listExecutions({ workflowId: workflow.id, page: { limit: 10 } }, as);
    expect(listed.items.map((item) => item.trigger)).toEqual(['manual', 'manual', 'manual', 'tool']);
  });

  databaseTest("a caller cannot name the runner's own triggers, or anything else: validation_error on `trigger`, nothing started", async ({ database, onTestFinished }) => {
    const runner = await startRunner(database);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }] });
    for (const trigger of ['webhook', 'schedule', 'retry', 'TOOL', 'agent']) {
      const error = await expectError(runner.executions.executeWorkflow({ workflowId: workflow.id, wait: false, waitMs: 0, trigger }, as), 'validation_error');
      expect(error.details).toEqual([{ field: 'trigger', message: 'must be one of manual, tool' }]);
    }
    // Every field at fault at once.
    const both = await expectError(runner.executions.executeWorkflow({ workflowId: workflow.id, inputJson: '[1]', wait: false, waitMs: 0, trigger: 'x' }, as), 'validation_error');
    expect(both.details.map((detail) => detail.field)).toEqual(['input', 'trigger']);
    expect((await runner.executions.listExecutions({ workflowId: workflow.id, page: { limit: 10 } }, as)).total).toBe(0);
  });
});
