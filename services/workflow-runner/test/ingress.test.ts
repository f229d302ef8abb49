import { describe, expect } from 'vitest';
import { databaseTest, newTenant, startRunner } from './support/harness.js';

const decode = (body: Buffer): unknown => JSON.parse(body.toString('utf8'));

describe('the ingress without its port (the all-in-one gateway’s /hooks)', { timeout: 30_000 }, () => {
  databaseTest('answers every request as the port does: accepted, refused bodies, unknown addresses', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'in', type: 'webhook', config: { path: '/orders' } }] });
    await runner.workflows.resumeWorkflow({ workflowId: workflow.id }, { principal: tenant.principal });

    const exchanges = [
      { url: `/hooks/${workflow.id}/orders?source=shop`, body: '{"order":1}', type: 'application/json' },
      { url: `/hooks/${workflow.id}/orders`, body: '{not json', type: 'application/json' },
      { url: '/hooks/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV', body: '{}', type: 'application/json' },
    ];
    const statuses: number[] = [];
    for (const { url, body, type } of exchanges) {
      const overPort = await fetch(`${runner.ingressUrl}${url}`, { method: 'POST', body, headers: { 'content-type': type } });
      const inProcess = await runner.inProcessIngress({ method: 'POST', url, headers: { 'content-type': type, 'content-length': '999' }, body: Buffer.from(body) });
      expect(inProcess.statusCode, url).toBe(overPort.status);
      statuses.push(inProcess.statusCode);
      expect(inProcess.headers['content-type'], url).toBe(overPort.headers.get('content-type'));
      const portAnswer = (await overPort.json()) as Record<string, unknown>;
      const answer = decode(inProcess.body) as Record<string, unknown>;
      // Each accepted request is an execution of its own; everything else is word for word.
      if (overPort.status === 202) {
        expect(answer).toEqual({ ...portAnswer, execution_id: expect.stringMatching(/^exe_/) as unknown });
        expect(answer['execution_id']).not.toBe(portAnswer['execution_id']);
      } else {
        expect(answer, url).toEqual(portAnswer);
      }
    }
    expect(statuses).toEqual([202, 400, 404]);
  });

  databaseTest('refuses once the runner stops, as its closed port would', async ({ database }) => {
    const runner = await startRunner(database);
    await runner.stop();
    await expect(runner.inProcessIngress({ method: 'POST', url: '/hooks/wf_01ARZ3NDEKTSV4RRFFQ69G5FAV', headers: {}, body: Buffer.from('{}') })).rejects.toThrow(/not serving/);
  });
});
