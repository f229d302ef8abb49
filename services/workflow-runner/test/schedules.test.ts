import { describe, expect, vi } from 'vitest';
import { databaseTest, newTenant, startRunner } from './support/harness.js';

const ENV = { SCHEDULE_POLL_INTERVAL_MS: '100' };

describe('schedule triggers', { timeout: 60_000 }, () => {
  databaseTest('a per-second cron starts exactly one execution per tick across two runners, and only while active', async ({ database, onTestFinished }) => {
    const one = await startRunner(database, ENV);
    onTestFinished(() => one.stop());
    const two = await startRunner(database, ENV);
    onTestFinished(() => two.stop());
    const tenant = newTenant();
    const workflow = await one.createWorkflow(tenant, {
      nodes: [
        { id: 'tick', type: 'schedule', config: { cron: '* * * * * *', timezone: 'Europe/Paris' } },
        { id: 'check', type: 'condition', config: { rules: [{ if: 'has(input.scheduled_at)', goto: 'done' }] } },
        { id: 'done', type: 'condition', config: { rules: [] } },
      ],
      edges: [
        { source: 'tick', target: 'check' },
        { source: 'check', target: 'done' },
      ],
    });
    expect(workflow.triggerType).toBe('schedule');
    const executionsOf = () => database.query<{ id: string; trigger: string; status: string; scheduled_at: string }>(
      `select id, trigger, status, input->>'scheduled_at' as scheduled_at from executions where workflow_id = $1 order by started_at`,
      [workflow.id],
    );

    // A draft does not tick: wait for a later workflow's tick as the sentinel.
    const sentinel = await one.createWorkflow(tenant, { nodes: [{ id: 'tick', type: 'schedule', config: { cron: '* * * * * *' } }] });
    await one.workflows.resumeWorkflow({ workflowId: sentinel.id }, { principal: tenant.principal });
    await vi.waitFor(async () => expect((await database.query('select 1 from executions where workflow_id = $1', [sentinel.id])).length).toBeGreaterThan(0), { timeout: 5_000, interval: 50 });
    await one.workflows.pauseWorkflow({ workflowId: sentinel.id }, { principal: tenant.principal });
    expect(await executionsOf()).toEqual([]);

    await one.workflows.resumeWorkflow({ workflowId: workflow.id }, { principal: tenant.principal });
    await vi.waitFor(async () => expect((await executionsOf()).length).toBeGreaterThanOrEqual(4), { timeout: 15_000, interval: 100 });
    await two.workflows.pauseWorkflow({ workflowId: workflow.id }, { principal: tenant.principal });

    const rows = await executionsOf();
    const ticks = rows.map((row) => row.scheduled_at);
    // Exactly one execution per tick, each on a whole second.
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const tick of ticks) expect(tick).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect(rows.every((row) => row.trigger === 'schedule')).toBe(true);
    await vi.waitFor(async () => expect((await executionsOf()).every((row) => row.status === 'completed')).toBe(true), { timeout: 10_000, interval: 100 });

    // Paused: no tick after the pause. A tick of the (resumed) sentinel is the proof that ticks still happen.
    // A look that began before the pause may still start one; count after a sentinel tick that followed it.
    await one.workflows.resumeWorkflow({ workflowId: sentinel.id }, { principal: tenant.principal });
    const sentinelRuns = async () => (await database.query('select 1 from executions where workflow_id = $1', [sentinel.id])).length;
    const resumedAt = await sentinelRuns();
    await vi.waitFor(async () => expect(await sentinelRuns()).toBeGreaterThan(resumedAt), { timeout: 5_000, interval: 50 });
    const countAtPause = (await executionsOf()).length;
    const before = await sentinelRuns();
    await vi.waitFor(async () => expect(await sentinelRuns()).toBeGreaterThan(before + 1), { timeout: 5_000, interval: 50 });
    expect((await executionsOf()).length).toBe(countAtPause);
  });
});
