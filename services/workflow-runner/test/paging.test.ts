import { describe, expect } from 'vitest';
import { databaseTest, newTenant, startRunner } from './support/harness.js';

describe('executions listing', { timeout: 30_000 }, () => {
  databaseTest('pages newest first by cursor and gives no cursor after the last page, even a full one', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }] });
    const ran = [];
    for (let run = 0; run < 4; run += 1) ran.push((await runner.runSync(tenant, workflow.id)).id);

    const seen: string[] = [];
    const cursors: (string | undefined)[] = [];
    let cursor: string | undefined;
    do {
      const page = await runner.executions.listExecutions({ workflowId: workflow.id, page: { limit: 2, ...(cursor ? { cursor } : {}) } }, { principal: tenant.principal });
      expect(page.total).toBe(4);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor;
      cursors.push(cursor);
    } while (cursor && cursors.length < 5);
    expect(seen).toEqual(ran.reverse());
    // Two full pages: the second is the last, so it names no next one.
    expect(cursors.map((each) => each !== undefined)).toEqual([true, false]);
  });
});
