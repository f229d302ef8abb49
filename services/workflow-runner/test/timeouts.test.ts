import { describe, expect } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { databaseTest, newTenant, startRunner, statusesOf } from './support/harness.js';

describe('time-outs', { timeout: 30_000 }, () => {
  databaseTest('an execution past EXECUTION_TIMEOUT_MS fails, naming the node it was stuck in', async ({ database, onTestFinished }) => {
    // Never answers: the execution's time-out is what ends the node.
    const receiver = await startReceiver({ hold: 'answer' });
    const runner = await startRunner(database, { EXECUTION_TIMEOUT_MS: '1000' });
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
    const started = Date.now();
    const execution = await runner.runSync(tenant, workflow.id);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(execution.status).toBe('failed');
    expect(execution.error).toEqual({ nodeId: 'wait', message: 'the execution timed out after 1000 ms' });
    expect(statusesOf(execution)).toEqual({ wait: 'failed', after: 'pending' });
    expect(execution.nodeExecutions.find((node) => node.nodeId === 'wait')?.error).toBe('stopped: the execution timed out');
  });
});
