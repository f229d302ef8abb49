import { ManualClock, startReceiver } from '@agent-platform/kit/testing';
import type { Execution } from '@agent-platform/proto/workflows/v1';
import { describe, expect } from 'vitest';
import { newTenant, runnerTest, statusesOf } from './support/harness.js';

// The runner's clock, which only the back-off test moves.
const clock = new ManualClock();
const test = runnerTest({}, { clock });

function nodeOf(execution: Execution, nodeId: string) {
  return execution.nodeExecutions.find((node) => node.nodeId === nodeId)!;
}

/** A peer that fails the first `failures` requests to each path under /fail… with a 503, then answers. */
async function flakyPeer(failures: number) {
  const seen = new Map<string, number>();
  return startReceiver((request) => {
    const count = (seen.get(request.path) ?? 0) + 1;
    seen.set(request.path, count);
    return request.path.startsWith('/fail') && count <= failures ? { status: 503, json: { error: 'busy' } } : { json: { attempt: count } };
  });
}

describe('node retries and on_error (decisions §13)', () => {
  test('a node failing twice then succeeding completes with attempts 3, the backoff doubling between', async ({ runner }) => {
    const peer = await flakyPeer(2);
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: peer.url('/failing'), method: 'POST' }, retry: { max_attempts: 3, backoff_seconds: 0.1 } }],
    });
    const run = runner.runSync(tenant, workflow.id);
    // 0.1 s, then 0.2 s: each back-off waits on the clock beside the execution's time-out, and the
    // next attempt comes only once the clock has moved all of it.
    for (const [failures, backoffMs] of [[1, 100], [2, 200]] as const) {
      await Promise.race([clock.untilSleeping(2), run]);
      clock.advance(backoffMs - 1);
      expect(clock.sleeping).toBe(2);
      expect(peer.received()).toHaveLength(failures);
      clock.advance(1);
    }
    const done = await run;
    expect(done.status).toBe('completed');
    expect(nodeOf(done, 'call')).toMatchObject({ status: 'completed', attempts: 3, durationMs: 300, outputJson: expect.stringContaining('"attempt":3') });
    expect(peer.received()).toHaveLength(3);
  });

  test('retries stop at max_attempts: the node and the execution fail with the last error', async ({ runner }) => {
    const peer = await flakyPeer(5);
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: peer.url('/failing'), method: 'POST' }, retry: { max_attempts: 2, backoff_seconds: 0 } }],
    });
    const done = await runner.runSync(tenant, workflow.id);
    expect(done.status).toBe('failed');
    expect(nodeOf(done, 'call')).toMatchObject({ status: 'failed', attempts: 2, error: expect.stringContaining('HTTP 503') });
    expect(peer.received()).toHaveLength(2);
  });

  test('a node without retry runs once; attempts shows 1, and 0 for a skipped node', async ({ runner }) => {
    const peer = await flakyPeer(0);
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'call', type: 'integration', config: { service: 'http', url: peer.url('/once'), method: 'POST' } },
        { id: 'route', type: 'condition', config: { rules: [] } },
        { id: 'never', type: 'integration', config: { service: 'http', url: peer.url('/never'), method: 'POST' } },
      ],
      edges: [
        { source: 'call', target: 'route' },
        { source: 'route', target: 'never' },
      ],
    });
    const done = await runner.runSync(tenant, workflow.id);
    expect(done.nodeExecutions.map((node) => [node.nodeId, node.status, node.attempts])).toEqual([
      ['call', 'completed', 1],
      ['route', 'completed', 1],
      ['never', 'skipped', 0],
    ]);
  });

  test('on_error continue records the node failed with output {error} and runs its successors; the execution completes', async ({ runner }) => {
    const peer = await flakyPeer(1);
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'call', type: 'integration', config: { service: 'http', url: peer.url('/fails'), method: 'POST' }, on_error: 'continue' },
        { id: 'after', type: 'integration', config: { service: 'http', url: peer.url('/after'), method: 'POST', body: { saw: '{{ nodes.call.output.error }}' } } },
      ],
      edges: [{ source: 'call', target: 'after' }],
    });
    const done = await runner.runSync(tenant, workflow.id);
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    expect(statusesOf(done)).toEqual({ call: 'failed', after: 'completed' });
    const failed = nodeOf(done, 'call');
    expect(failed.error).toContain('HTTP 503');
    expect(JSON.parse(failed.outputJson!)).toEqual({ error: failed.error });
    expect(peer.received('/after')[0]!.json).toEqual({ saw: failed.error });
  });

  test('without on_error the failure stops the run: successors are skipped and the execution fails', async ({ runner }) => {
    const peer = await flakyPeer(1);
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'call', type: 'integration', config: { service: 'http', url: peer.url('/fails'), method: 'POST' }, on_error: 'fail' },
        { id: 'after', type: 'integration', config: { service: 'http', url: peer.url('/after'), method: 'POST' } },
      ],
      edges: [{ source: 'call', target: 'after' }],
    });
    const done = await runner.runSync(tenant, workflow.id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ nodeId: 'call' });
    expect(peer.received('/after')).toEqual([]);
  });

  test('retry and on_error are kept on the saved node as given, and refused with their path when wrong', async ({ runner }) => {
    const tenant = newTenant();
    const node = { id: 'call', type: 'integration', config: { service: 'http', url: 'https://example.com', method: 'GET', headers: {} }, retry: { max_attempts: 4, backoff_seconds: 2 }, on_error: 'continue' };
    const saved = await runner.createWorkflow(tenant, { nodes: [node] });
    expect(JSON.parse(saved.nodesJson)).toEqual([node]);
    const bad = [
      { ...node, retry: { max_attempts: 11 } },
      { ...node, retry: { max_attempts: 2, backoff_seconds: -1, tries: 3 } },
      { ...node, retry: 'often' },
      { ...node, on_error: 'ignore' },
    ];
    const fields = [];
    for (const nodes of bad) {
      const error = await runner.workflows.createWorkflow({ name: 'x', nodesJson: JSON.stringify([nodes]), edgesJson: '[]' }, { principal: tenant.principal }).catch((caught: unknown) => caught);
      fields.push((error as { details: { field: string }[] }).details.map((detail) => detail.field));
    }
    expect(fields).toEqual([
      ['nodes[0].retry.max_attempts'],
      ['nodes[0].retry.tries', 'nodes[0].retry.backoff_seconds'],
      ['nodes[0].retry'],
      ['nodes[0].on_error'],
    ]);
  });
});
