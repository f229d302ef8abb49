import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReceiver, type Answer, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';
import { createWorkflow, finished, nodeStatuses, runSync } from './harness/workflows.js';

/** Local peers: a JSON echo, an error, one that never answers, and Slack's incoming-webhook protocol. */
let server: Receiver;
const text = (status: number, body: string): Answer => ({ status, headers: { 'content-type': 'text/plain' }, body });
beforeAll(async () => {
  server = await startReceiver((request) => {
    if (request.path === '/hang') return { hold: 'answer' };
    if (request.path === '/fail') return text(500, 'boom');
    if (request.path === '/slack') return (request.json as { text?: string }).text ? text(200, 'ok') : text(400, 'no_text');
    return { json: { path: request.path, method: request.method, received: request.body === '' ? null : (JSON.parse(request.body) as unknown) } };
  });
});
afterAll(() => server.close());

/** The messages the Slack peer accepted. */
const slackMessages = () => server.received('/slack').flatMap((request) => ((request.json as { text?: string }).text ? [request.json] : []));

const http = (id: string, path: string, extra: Record<string, unknown> = {}) => ({ id, type: 'integration', config: { service: 'http', url: server.url(path), ...extra } });

describe('the engine', () => {
  it('runs independent branches in parallel and joins them, passing outputs along by template', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, {
      name: 'Fan out and in',
      nodes: [
        http('left', '/left', { method: 'POST', body: { n: '{{ input.n }}' } }),
        http('right', '/right', { method: 'GET' }),
        http('join', '/join', { method: 'POST', body: { left: '{{ nodes.left.output.body.path }}', right: '{{ nodes.right.output.body.method }}' } }),
      ],
      edges: [
        { source: 'left', target: 'join' },
        { source: 'right', target: 'join' },
      ],
    });
    const run = await runSync(api, account, workflow.id, { n: 7 });
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(nodeStatuses(run)).toEqual({ left: 'completed', right: 'completed', join: 'completed' });
    expect(run.output).toMatchObject({ status: 200, body: { path: '/join', received: { left: '/left', right: 'GET' } } });
    const left = run.node_executions.find((node) => node.node_id === 'left')!;
    const right = run.node_executions.find((node) => node.node_id === 'right')!;
    const join = run.node_executions.find((node) => node.node_id === 'join')!;
    // The join starts only after both of its inputs finished.
    expect(join.started_at! >= left.completed_at!).toBe(true);
    expect(join.started_at! >= right.completed_at!).toBe(true);
  });

  it('fails the execution at a failing node, naming it, and does not run what follows', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Fails', nodes: [http('call', '/fail'), http('after', '/after')], edges: [{ source: 'call', target: 'after' }] });
    const run = await runSync(api, account, workflow.id);
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ node_id: 'call', message: expect.stringContaining('500') });
    expect(nodeStatuses(run)).toEqual({ call: 'failed', after: 'pending' });
    expect(run.node_executions.find((node) => node.node_id === 'call')?.error).toContain('500');
    const read = expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflow.id } } }));
    expect(read.statistics).toMatchObject({ total_runs: 1, success_rate: 0 });
  });

  it('times a node out after its timeout_ms', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Slow', nodes: [http('slow', '/hang', { timeout_ms: 300 })], edges: [] });
    const run = await runSync(api, account, workflow.id);
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ node_id: 'slow', message: 'timed out after 300 ms' });
  });

  it('fails a condition whose rule fails at run time with the message', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, {
      name: 'Bad data',
      nodes: [{ id: 'check', type: 'condition', config: { rules: [{ if: 'input.customer.tier == "gold"', goto: 'gold' }, { else: 'gold' }] } }, http('gold', '/gold')],
      edges: [],
    });
    const run = await runSync(api, account, workflow.id, { amount: 1 });
    expect(run.status).toBe('failed');
    expect(run.error?.node_id).toBe('check');
    expect(run.error?.message).toMatch(/^rule 1: /);
    expect(nodeStatuses(run).gold).toBe('pending');
  });

  it('talks to an agent (the offline model), charging its credits', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agent = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Helper', type: 'assistant' } }), 201);
    const workflow = await createWorkflow(api, account, {
      name: 'Ask',
      nodes: [{ id: 'ask', type: 'agent', config: { agent_id: agent.id, message: 'Summarise order {{ input.order }}' } }],
      edges: [],
    });
    const credits = async () => expectStatus(await account.client.GET('/api/v1/billing/credits')).balance;
    const before = await credits();
    const run = await runSync(api, account, workflow.id, { order: 'A-17' });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.output).toEqual({
      content: expect.any(String),
      session_id: expect.stringMatching(/^ses_/),
      run_id: expect.stringMatching(/^run_/),
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(await credits()).toBeLessThan(before);
    // The node's turn is a run of the agent, started by the workflow (decisions §16).
    const turn = expectStatus(await account.client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: (run.output as { run_id: string }).run_id } } }));
    expect(turn).toMatchObject({ agent_id: agent.id, trigger: 'workflow', status: 'completed', input: 'Summarise order A-17' });
    const sessions = expectStatus(await account.client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agent.id } } }));
    expect(sessions.items.map((session) => session.id)).toContain((run.output as { session_id: string }).session_id);
  });

  it('refuses to save an agent node whose agent is not in the tenant, and fails a run whose agent was deleted since', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const nobody = await account.client.POST('/api/v1/workflows', {
      body: { name: 'Nobody', nodes: [{ id: 'ask', type: 'agent', config: { agent_id: 'agt_01JD0000000000000000000000' } }], edges: [] },
    });
    expect(expectError(nobody, 422, 'validation_error').details).toEqual([{ field: 'nodes[0].config.agent_id', message: 'is not an agent of this tenant' }]);

    const agent = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Leaving', type: 'assistant' } }), 201);
    const workflow = await createWorkflow(api, account, { name: 'Orphaned', nodes: [{ id: 'ask', type: 'agent', config: { agent_id: agent.id } }], edges: [] });
    expectStatus(await account.client.DELETE('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agent.id } } }));
    const run = await runSync(api, account, workflow.id, { message: 'hello' });
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ node_id: 'ask', message: expect.stringContaining('not found') });
  });

  it('posts to Slack incoming webhooks and fails on their error answer', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, {
      name: 'Notify',
      nodes: [{ id: 'say', type: 'integration', config: { service: 'slack', webhook_url: server.url('/slack'), text: 'New order {{ input.order }}' } }],
      edges: [],
    });
    const run = await runSync(api, account, workflow.id, { order: 'B-2' });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(slackMessages()).toContainEqual({ text: 'New order B-2' });
    const empty = await createWorkflow(api, account, { name: 'Silent', nodes: [{ id: 'say', type: 'integration', config: { service: 'slack', webhook_url: server.url('/slack'), text: '{{ input.nothing }}' } }], edges: [] });
    const failed = await runSync(api, account, empty.id, { nothing: '' });
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toContain('no_text');
  });

  it('sends e-mail through the platform SMTP server, templates rendered', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const recipient = `${account.tenantId.toLowerCase()}@example.com`;
    const workflow = await createWorkflow(api, account, {
      name: 'Mail',
      nodes: [{ id: 'mail', type: 'integration', config: { service: 'email', to: '{{ input.to }}', subject: 'Order {{ input.order }}', text: 'Total {{ input.total }}' } }],
      edges: [],
    });
    const run = await runSync(api, account, workflow.id, { to: recipient, order: 'C-3', total: 12.5 });
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(run.output).toMatchObject({ message_id: expect.any(String), accepted: [recipient] });
    const mailDir = inject('mailDir');
    const mails = await Promise.all((await readdir(mailDir)).map(async (file) => JSON.parse(await readFile(join(mailDir, file), 'utf8')) as { to: string[]; data: string }));
    const mine = mails.filter((mail) => mail.to.includes(recipient));
    expect(mine).toHaveLength(1);
    expect(mine[0]?.data).toContain('Subject: Order C-3');
    expect(mine[0]?.data).toContain('Total 12.5');
  });

  it('starts one execution per tick of a per-second schedule while active', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Every second', nodes: [{ id: 'tick', type: 'schedule', config: { cron: '* * * * * *' } }], edges: [] });
    expect(workflow.trigger_type).toBe('schedule');
    const path = { params: { path: { workflow_id: workflow.id } } };
    // Each tick's execution announces itself to a webhook: two announcements are two ticks.
    expectStatus(await account.client.POST('/api/v1/webhooks', { body: { url: server.url('/ticks'), events: ['workflow.execution.started'] } }), 201);
    expectStatus(await account.client.POST('/api/v1/workflows/{workflow_id}/resume', path));
    const list = async () => expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}/executions', path));
    await server.waitFor(2, { match: (request) => request.path === '/ticks' && request.body.includes(workflow.id), timeoutMs: 10_000 });
    expectStatus(await account.client.POST('/api/v1/workflows/{workflow_id}/pause', path));
    const runs = await list();
    expect(runs.total).toBeGreaterThanOrEqual(2);
    expect(runs.items.every((item) => item.trigger === 'schedule')).toBe(true);
    const first = await finished(api, account, workflow.id, runs.items.at(-1)!.id);
    expect(first.input).toEqual({ scheduled_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/) });
  });

  it('cancels a running execution at once and retries one with the same input', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Hangs', nodes: [http('wait', '/hang', { timeout_ms: 60_000 })], edges: [] });
    const { client } = account;
    const execute = await client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: workflow.id } }, body: { input: { attempt: 1 } } });
    const executionId = expectStatus(execute, 202).execution_id;
    const execution = (execution_id: string) => ({ params: { path: { workflow_id: workflow.id, execution_id } } });
    const cancel = (execution_id: string) => client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/cancel', execution(execution_id));
    expect(expectStatus(await cancel(executionId))).toMatchObject({ id: executionId, status: 'cancelled', completed_at: expect.any(String) });
    expectError(await cancel(executionId), 409, 'conflict');

    const retried = expectStatus(await client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/retry', execution(executionId)), 202);
    expect(retried.execution_id).not.toBe(executionId);
    const retry = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', execution(retried.execution_id)));
    expect(retry).toMatchObject({ trigger: 'retry', input: { attempt: 1 }, status: 'running' });
    expectStatus(await cancel(retried.execution_id));
    const stopped = await finished(api, account, workflow.id, retried.execution_id);
    expect(stopped.status).toBe('cancelled');
  });
});
