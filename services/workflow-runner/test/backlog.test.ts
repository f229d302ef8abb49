import { newId, systemClock } from '@agent-platform/kit';
import { expect } from 'vitest';
import { openDatabase } from '../src/database.js';
import { ExecutionLeases } from '../src/executions/execution-leases.js';
import { databaseTest, logger, newTenant, startRunner } from './support/harness.js';

// What KEDA scales the runners on (decisions §18.5): executions nobody holds that could run now, and how long the oldest has waited.
databaseTest('the backlog counts orphaned and woken executions, from when each became runnable', async ({ database }) => {
  const runner = await startRunner(database);
  const tenant = newTenant();
  const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }] });
  const done = await runner.runSync(tenant, workflow.id);
  // Stopped first: a runner would claim the rows below as soon as they are written.
  await runner.stop();

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  // Started long before they became runnable: the age counts from the lapse or the wake-up, never the start.
  const copies: Record<string, unknown>[] = [
    { status: 'running', lease_owner: null, lease_until: null, started_at: ago(60) }, // never leased: since it started
    { status: 'running', lease_owner: 'gone', lease_until: ago(100), started_at: ago(200) }, // its runner died: since the lease lapsed
    { status: 'running', lease_owner: 'alive', lease_until: ago(-30), started_at: ago(300) }, // held
    { status: 'waiting', lease_owner: null, lease_until: null, wake_at: ago(10), started_at: ago(400) }, // its time came
    { status: 'waiting', lease_owner: null, lease_until: null, wake_at: ago(-60), started_at: ago(500) }, // still waiting
  ];
  for (const fields of copies) {
    await database.query(`insert into executions select (jsonb_populate_record(e, $2::jsonb)).* from executions e where e.id = $1`, [
      done.id,
      JSON.stringify({ ...fields, id: newId('execution') }),
    ]);
  }

  const orm = await openDatabase(database.url, logger);
  try {
    const backlog = await new ExecutionLeases(orm.em, { owner: 'test', leaseMs: 10_000, executionTimeoutMs: 60_000, clock: systemClock }).backlog();
    expect(backlog.due).toBe(3);
    expect(backlog.oldestSeconds).toBeGreaterThanOrEqual(99);
    expect(backlog.oldestSeconds).toBeLessThan(110);
  } finally {
    await orm.close();
  }
});
