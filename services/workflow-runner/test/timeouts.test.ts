import { describe, expect } from 'vitest';
import { ManualClock, startReceiver } from '@agent-platform/kit/testing';
import { databaseTest, newTenant, startRunner, statusesOf } from './support/harness.js';

describe('time-outs', { timeout: 30_000 }, () => {
  databaseTest('an execution past EXECUTION_TIMEOUT_MS fails, naming the node it was stuck in', async ({ database, onTestFinished }) => {
    // Never answers: the execution's time-out is what ends the node.
    const receiver = await startReceiver({ hold: 'answer' });
    const clock = new ManualClock();
    const runner = await startRunner(database, { EXECUTION_TIMEOUT_MS: '1000' }, { clock });
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const url = receiver.url('/slow');
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'wait', type: 'integration', config: { service: 'http', url, timeout_ms: 60_000 } },
        { id: 'after', type: 'condition', config: { rules: [] } },
      ],
      edges: [{ source: 'wait', target: 'after' }],
    });
    const run = runner.runSync(tenant, workflow.id);
    // The node is in flight; the execution's time-out, on the clock, ends it at its deadline and not before.
    await receiver.waitFor(1);
    clock.advance(999);
    expect(clock.sleeping).toBe(1);
    clock.advance(1);
    const execution = await run;
    expect(execution.status).toBe('failed');
    expect(execution.durationMs).toBe(1_000);
    expect(execution.error).toEqual({ nodeId: 'wait', message: 'the execution timed out after 1000 ms' });
    expect(statusesOf(execution)).toEqual({ wait: 'failed', after: 'pending' });
    expect(execution.nodeExecutions.find((node) => node.nodeId === 'wait')?.error).toBe('stopped: the execution timed out');
  });
});
