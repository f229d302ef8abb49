import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { Run, RunStep } from '@agent-platform/proto/agents/v1/runs';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';
import { newId } from '@agent-platform/kit';
import { agentMemoryTest, databaseTest, eventsOf, expectError, newTenant, ownDatabaseTest, principalOf, startAgentMemory, type AgentMemoryHarness, type TestTenant } from './support/harness.js';
import { agentWith, httpTool } from './support/turn-tools.js';

/** decisions §16: every turn is a run, with its steps as they happened. */

// Tools call a receiver on loopback: the address policy must allow private networks here.
const ENV = { ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: '2000' };

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => {
    if (request.path.startsWith('/big')) return { json: { blob: 'x'.repeat(10_000) } };
    return { json: { echoed: request.json ?? null } };
  });
});
afterAll(() => receiver.close());

const test = agentMemoryTest({ env: ENV });

async function runOf(service: AgentMemoryHarness, tenant: TestTenant, runId: string): Promise<Run> {
  const { run } = await service.runs.getRun({ runId }, { principal: tenant.principal });
  return run!;
}

function dataOf(step: RunStep): Record<string, unknown> {
  return { type: step.type, ...(JSON.parse(step.dataJson) as Record<string, unknown>) };
}

describe('A turn is a run', () => {
  test('a chat turn records its retrieval and model round, its input, output, usage and credits, and answers its run_id', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The customer prefers e-mail over phone calls.' }, call);

    const reply = await service.chat.chat({ agentId: agent.id, message: 'How does the customer prefer to be contacted, e-mail or phone?' }, call);
    expect(reply.runId).toMatch(/^run_/);
    const run = await runOf(service, tenant, reply.runId);
    expect(run).toMatchObject({
      id: reply.runId,
      agentId: agent.id,
      agentVersion: 1,
      sessionId: reply.sessionId,
      trigger: 'chat',
      status: 'completed',
      input: 'How does the customer prefer to be contacted, e-mail or phone?',
      output: reply.content,
      usage: reply.usage,
      credits: reply.credits,
      error: undefined,
      parentRunId: undefined,
    });
    expect(run.durationMs).toBe(run.completedAt!.getTime() - run.startedAt!.getTime());
    expect(run.steps.map((step) => step.type)).toEqual(['retrieval', 'model']);
    expect(dataOf(run.steps[0]!)).toMatchObject({ query: run.input, items: [{ memory_id: item!.id, score: reply.memories[0]!.score }] });
    expect(dataOf(run.steps[1]!)).toMatchObject({
      round: 1,
      model: 'offline',
      tokens: { prompt: reply.usage!.promptTokens, completion: reply.usage!.completionTokens, total: reply.usage!.totalTokens },
      credits: reply.credits,
      finish_reason: 'stop',
      tool_calls: [],
    });
  });

  test('a streamed turn names its run on every event, and a caller of the platform names its trigger', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);
    const events = [];
    for await (const event of service.chat.streamChat({ agentId, message: 'Tell me something' }, call)) events.push(event);
    const runId = events.at(-1)!.completed!.runId;
    expect(events.length).toBeGreaterThan(1);
    expect(events.every((event) => event.runId === runId)).toBe(true);
    expect(await runOf(service, tenant, runId)).toMatchObject({ trigger: 'stream', status: 'completed' });

    const mcp = await service.chat.chat({ agentId, message: 'From an MCP client', trigger: 'mcp' }, call);
    expect(await runOf(service, tenant, mcp.runId)).toMatchObject({ trigger: 'mcp' });
    // What only the platform starts (evals, background runs, agent tools) no caller may claim.
    const refused = await expectError(service.chat.chat({ agentId, message: 'x', trigger: 'eval' }, call), 'validation_error');
    expect(refused.details.map((detail) => detail.field)).toEqual(['trigger']);
  });

  test('tool calls are steps with their arguments and results, cut at 4 KiB', async ({ service }) => {
    const tenant = newTenant();
    const tools = [await httpTool(service, tenant, receiver, 'lookup_order', '/orders'), await httpTool(service, tenant, receiver, 'fetch_blob', '/big')];
    const agentId = await agentWith(service, tenant, tools);
    const reply = await service.chat.chat({ agentId, message: 'Please lookup_order {"n": 7} and fetch_blob {"n": 1}' }, { principal: tenant.principal });
    const run = await runOf(service, tenant, reply.runId);
    expect(run.steps.map((step) => step.type)).toEqual(['retrieval', 'model', 'tool', 'tool', 'model']);
    const [, asked, order, blob, answered] = run.steps.map(dataOf);
    expect(asked).toMatchObject({ round: 1, finish_reason: 'tool_calls', tool_calls: reply.toolCalls.map(({ id, name }) => ({ id, name })) });
    expect(order).toMatchObject({ call_id: reply.toolCalls[0]!.id, name: 'lookup_order', status: 'completed', arguments: { n: 7 }, result: { echoed: { n: 7 } }, run_id: null });
    expect(blob).toMatchObject({ name: 'fetch_blob', status: 'completed', result: { truncated: true, text: expect.stringMatching(/^\{"blob":"x+$/) } });
    expect(Buffer.byteLength(JSON.stringify(blob!['result']))).toBeLessThanOrEqual(4_096);
    expect(answered).toMatchObject({ round: 2, finish_reason: 'stop' });
    expect(run.steps[2]!.durationMs).toBe(reply.toolCalls[0]!.durationMs);
  });

  test('a turn that waits for a decision is one run: awaiting_approval, then the approval and the call as steps, then completed', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'refund', '/refunds', true)]);
    const paused = await service.chat.chat({ agentId, message: 'refund {"n": 5}' }, call);
    expect(await runOf(service, tenant, paused.runId)).toMatchObject({ status: 'awaiting_approval', output: undefined, completedAt: undefined });

    const { reply } = await service.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId: paused.toolCalls[0]!.id, approve: true }, call);
    expect(reply!.runId).toBe(paused.runId);
    const run = await runOf(service, tenant, paused.runId);
    expect(run).toMatchObject({ status: 'completed', output: reply!.content, credits: reply!.credits });
    expect(run.steps.map(dataOf)).toEqual([
      expect.objectContaining({ type: 'retrieval', query: 'refund {"n": 5}' }),
      expect.objectContaining({ type: 'model', round: 1, finish_reason: 'tool_calls' }),
      expect.objectContaining({ type: 'approval', call_id: paused.toolCalls[0]!.id, decision: 'approved', decided_by: tenant.principal.userId }),
      expect.objectContaining({ type: 'tool', call_id: paused.toolCalls[0]!.id, status: 'completed', result: { echoed: { n: 5 } } }),
      expect.objectContaining({ type: 'model', round: 2, finish_reason: 'stop' }),
    ]);
  });

  test('a decision continues the turn as the version of the agent it began with, even after the agent changed', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'refund', '/refunds', true)]);
    const paused = await service.chat.chat({ agentId, message: 'refund {"n": 8}' }, call);
    // Version 2 no longer has the tool: the turn that asked for it still runs it, as version 1.
    await service.agents.updateAgent({ agentId, replace: false, setMemoryTypes: false, memoryTypes: [], setTools: true, tools: [] }, call);
    const { reply } = await service.chat.decideToolCall({ agentId, sessionId: paused.sessionId, callId: paused.toolCalls[0]!.id, approve: true }, call);
    expect(reply!.toolCalls[0]).toMatchObject({ status: 'completed', resultJson: JSON.stringify({ echoed: { n: 8 } }) });
    expect(await runOf(service, tenant, paused.runId)).toMatchObject({ status: 'completed', agentVersion: 1 });
  });

  test('a turn with an end user records its extraction as its last step', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const reply = await service.chat.chat({ agentId: agent.id, message: 'I moved to Lisbon.', userId: 'dana' }, { principal: tenant.principal });
    const run = await vi.waitFor(
      async () => {
        const found = await runOf(service, tenant, reply.runId);
        expect(found.steps.at(-1)?.type).toBe('extraction');
        return found;
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(run.userId).toBe('dana');
    expect(dataOf(run.steps.at(-1)!)).toEqual({ type: 'extraction', added: 1, updated: 0, deleted: 0 });
  });

  test('a turn may run with a past version of its agent; its run records the version it ran', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, [], { system_prompt: 'You are version one.' });
    await service.agents.updateAgent({ agentId, replace: false, setMemoryTypes: false, memoryTypes: [], configJson: JSON.stringify({ system_prompt: 'You are version two.' }), setTools: false, tools: [] }, call);
    const current = await service.chat.chat({ agentId, message: 'hello' }, call);
    const past = await service.chat.chat({ agentId, message: 'hello', agentVersion: 1 }, call);
    expect((await runOf(service, tenant, current.runId)).agentVersion).toBe(2);
    expect((await runOf(service, tenant, past.runId)).agentVersion).toBe(1);
    await expectError(service.chat.chat({ agentId, message: 'hello', agentVersion: 9 }, call), 'not_found');
    const { run } = await service.runs.startRun({ agentId, message: 'later', agentVersion: 1 }, call);
    expect(run!.agentVersion).toBe(1);
  });

  test("another tenant's run is not_found, and a viewer may read runs but not score them", async ({ service }) => {
    const tenant = newTenant();
    const agentId = await agentWith(service, tenant, []);
    const reply = await service.chat.chat({ agentId, message: 'hello' }, { principal: tenant.principal });
    await expectError(service.runs.getRun({ runId: reply.runId }, { principal: newTenant().principal }), 'not_found');
    await expectError(service.runs.listRuns({ agentId, page: undefined, since: undefined, until: undefined }, { principal: newTenant().principal }), 'not_found');
    await expectError(service.runs.getRun({ runId: 'not-a-run' }, { principal: tenant.principal }), 'not_found');
    const viewer = { principal: principalOf(tenant.tenantId, 'viewer') };
    expect((await service.runs.getRun({ runId: reply.runId }, viewer)).run!.id).toBe(reply.runId);
    await expectError(service.runs.setRunFeedback({ runId: reply.runId, score: 1 }, viewer), 'forbidden');
  });

  test('deleting a session deletes its runs, which hold its text', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);
    const reply = await service.chat.chat({ agentId, message: 'my account number is 12345' }, call);
    await service.chat.deleteSession({ agentId, sessionId: reply.sessionId }, call);
    await expectError(service.runs.getRun({ runId: reply.runId }, call), 'not_found');
  });
});

describe('Agents that call agents', () => {
  const MESSAGE = JSON.stringify({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });

  async function agentTool(service: AgentMemoryHarness, tenant: TestTenant, name: string, agentId: string): Promise<string> {
    const { tool } = await service.tools.createTool({ name, description: `Asks ${agentId}`, type: 'agent', configJson: JSON.stringify({ agent_id: agentId }), inputSchemaJson: MESSAGE, requiresApproval: false }, { principal: tenant.principal });
    return tool!.id;
  }

  test("an agent tool's call is a turn of the other agent in a session of its own, its run the caller's child", async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const helper = await agentWith(service, tenant, []);
    const caller = await agentWith(service, tenant, [await agentTool(service, tenant, 'ask_helper', helper)]);
    const reply = await service.chat.chat({ agentId: caller, message: 'Please ask_helper {"message": "What is 2 + 2?"}' }, call);
    expect(reply.toolCalls[0]).toMatchObject({ name: 'ask_helper', status: 'completed' });
    const result = JSON.parse(reply.toolCalls[0]!.resultJson!) as { content: string; run_id: string; session_id: string };
    expect(result.content).toContain('What is 2 + 2?');
    expect(result.session_id).not.toBe(reply.sessionId);

    const parent = await runOf(service, tenant, reply.runId);
    expect(parent.steps.map(dataOf).find((step) => step.type === 'tool')).toMatchObject({ name: 'ask_helper', run_id: result.run_id });
    const child = await runOf(service, tenant, result.run_id);
    expect(child).toMatchObject({ agentId: helper, trigger: 'agent', parentRunId: reply.runId, status: 'completed', input: 'What is 2 + 2?', sessionId: result.session_id });
    // Charged like any turn: the child's rounds too.
    expect(service.credits.charges.filter((charge) => charge.tenantId === tenant.tenantId).length).toBeGreaterThanOrEqual(3);
  });

  test('nesting deeper than 3 is a failed call; an agent tool naming its own agent fails; a tool of another tenant\'s agent is refused at save', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const d = await agentWith(service, tenant, []);
    const c = await agentWith(service, tenant, [await agentTool(service, tenant, 'ask_d', d)]);
    const b = await agentWith(service, tenant, [await agentTool(service, tenant, 'ask_c', c)]);
    const a = await agentWith(service, tenant, [await agentTool(service, tenant, 'ask_b', b)]);
    const toC = `ask_c ${JSON.stringify({ message: `ask_d ${JSON.stringify({ message: 'hi' })}` })}`;
    const reply = await service.chat.chat({ agentId: a, message: `ask_b ${JSON.stringify({ message: toC })}` }, call);
    const bRun = JSON.parse(reply.toolCalls[0]!.resultJson!) as { run_id: string };
    const cRunId = (await runOf(service, tenant, bRun.run_id)).steps.map(dataOf).find((step) => step.type === 'tool')!['run_id'] as string;
    const cRun = await runOf(service, tenant, cRunId);
    expect(cRun.parentRunId).toBe(bRun.run_id);
    expect(cRun.steps.map(dataOf).find((step) => step.type === 'tool')).toMatchObject({ name: 'ask_d', status: 'failed', error: expect.stringContaining('3 deep') as unknown, run_id: null });
    expect((await service.runs.listRuns({ agentId: d, page: undefined, since: undefined, until: undefined }, call)).total).toBe(0);

    const selfish = await agentWith(service, tenant, []);
    await service.agents.updateAgent({ agentId: selfish, replace: false, setMemoryTypes: false, memoryTypes: [], setTools: true, tools: [await agentTool(service, tenant, 'ask_myself', selfish)] }, call);
    const looped = await service.chat.chat({ agentId: selfish, message: 'ask_myself {"message": "hi"}' }, call);
    expect(looped.toolCalls[0]).toMatchObject({ status: 'failed', error: 'an agent cannot call itself' });

    const refused = await expectError(
      service.tools.createTool({ name: 'ask_other', description: 'x', type: 'agent', configJson: JSON.stringify({ agent_id: await agentWith(service, newTenant(), []) }), inputSchemaJson: MESSAGE, requiresApproval: false }, call),
      'validation_error',
    );
    expect(refused.details).toEqual([{ field: 'config.agent_id', message: 'is not an agent of this tenant' }]);
  });
});

describe('Listing, feedback and stats', () => {
  test('lists newest first, cursor-paged, with each filter', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);
    const first = await service.chat.chat({ agentId, message: 'one', userId: 'ana' }, call);
    const second = await service.chat.chat({ agentId, message: 'two', sessionId: first.sessionId }, call);
    const between = new Date();
    const third = await service.chat.chat({ agentId, message: 'three', userId: 'ben', trigger: 'mcp' }, call);
    const list = (filter: Partial<Parameters<AgentMemoryHarness['runs']['listRuns']>[0]>) =>
      service.runs.listRuns({ agentId, page: undefined, since: undefined, until: undefined, ...filter }, call);

    const all = await list({});
    expect(all.items.map((run) => run.id)).toEqual([third.runId, second.runId, first.runId]);
    expect(all.total).toBe(3);
    expect(all.items.every((run) => run.steps.length === 0)).toBe(true);

    const page1 = await list({ page: { limit: 2 } });
    expect(page1.items.map((run) => run.id)).toEqual([third.runId, second.runId]);
    const page2 = await list({ page: { limit: 2, cursor: page1.nextCursor } });
    expect(page2.items.map((run) => run.id)).toEqual([first.runId]);
    expect(page2.nextCursor).toBeUndefined();

    expect((await list({ userId: 'ana' })).items.map((run) => run.id)).toEqual([second.runId, first.runId]);
    expect((await list({ sessionId: first.sessionId })).items.map((run) => run.id)).toEqual([second.runId, first.runId]);
    expect((await list({ trigger: 'mcp' })).items.map((run) => run.id)).toEqual([third.runId]);
    expect((await list({ status: 'failed' })).items).toEqual([]);
    expect((await list({ since: between })).items.map((run) => run.id)).toEqual([third.runId]);
    expect((await list({ until: between })).items.map((run) => run.id)).toEqual([second.runId, first.runId]);
    expect((await list({ minDurationMs: 3_600_000 })).items).toEqual([]);
    expect((await list({ minDurationMs: 0 })).total).toBe(3);

    const refused = await expectError(list({ status: 'done', trigger: 'cron', minDurationMs: -1, since: new Date(2), until: new Date(1) }), 'validation_error');
    expect(refused.details.map((detail) => detail.field)).toEqual(['status', 'trigger', 'min_duration_ms', 'since']);
    expect((await expectError(list({ page: { limit: 101 } }), 'validation_error')).details.map((detail) => detail.field)).toEqual(['limit']);
    expect((await expectError(list({ page: { limit: 5, cursor: 'garbage!' } }), 'validation_error')).details.map((detail) => detail.field)).toEqual(['cursor']);
  });

  test('feedback: the last score wins with who and when; stats sum runs, failures, durations, tokens, credits and feedback', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);
    const a = await service.chat.chat({ agentId, message: 'first question' }, call);
    const b = await service.chat.chat({ agentId, message: 'second question' }, call);

    await service.runs.setRunFeedback({ runId: a.runId, score: -1, comment: 'wrong' }, call);
    const { run } = await service.runs.setRunFeedback({ runId: a.runId, score: 1, comment: '  right after all  ' }, call);
    expect(run!.feedback).toEqual({ score: 1, comment: 'right after all', by: tenant.principal.userId, at: expect.any(Date) });
    await service.runs.setRunFeedback({ runId: b.runId, score: 0 }, call);
    const refused = await expectError(service.runs.setRunFeedback({ runId: b.runId, score: 2, comment: 'x'.repeat(2_001) }, call), 'validation_error');
    expect(refused.details.map((detail) => detail.field)).toEqual(['score', 'comment']);

    const stats = await service.runs.getAgentRunStats({ agentId, since: undefined, until: undefined }, call);
    const durations = [(await runOf(service, tenant, a.runId)).durationMs!, (await runOf(service, tenant, b.runId)).durationMs!].toSorted((x, y) => x - y);
    expect(stats).toMatchObject({
      runs: 2,
      completed: 2,
      failed: 0,
      failureRate: 0,
      p50DurationMs: durations[0],
      p95DurationMs: durations[1],
      usage: { totalTokens: a.usage!.totalTokens + b.usage!.totalTokens },
      credits: a.credits + b.credits,
      feedbackMean: 0.5,
      feedbackCount: 2,
    });
    const empty = await service.runs.getAgentRunStats({ agentId, since: new Date(Date.now() + 60_000), until: new Date(Date.now() + 120_000) }, call);
    expect(empty).toMatchObject({ runs: 0, failureRate: 0, p50DurationMs: undefined, feedbackMean: undefined });
    await expectError(service.runs.getAgentRunStats({ agentId, since: new Date(2), until: new Date(1) }, call), 'validation_error');
  });
});

describe('Runs that end without an answer', () => {
  let fake: FakeOpenAI;
  let service: AgentMemoryHarness | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await service?.stop();
    await fake.close();
  });

  ownDatabaseTest('a model failure fails the run with its reason and names no session never stored; a caller that goes away cancels it', async ({ database }) => {
    service = await startAgentMemory(database, { env: { LLM_BASE_URL: fake.baseURL, LLM_MODEL: 'tiny', LLM_TIMEOUT_MS: '500' } });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);

    fake.chat({ kind: 'error', status: 500 });
    await expectError(service.chat.chat({ agentId, message: 'doomed' }, call), 'upstream_error');
    const [failed] = (await service.runs.listRuns({ agentId, page: undefined, since: undefined, until: undefined, status: 'failed' }, call)).items;
    expect(failed).toMatchObject({ status: 'failed', input: 'doomed', sessionId: undefined, output: undefined, error: { code: 'upstream_error' }, credits: 0 });
    expect(failed!.durationMs).toBeGreaterThanOrEqual(0);

    fake.chat({ kind: 'stall' });
    const leaving = new AbortController();
    const stream = service.chat.streamChat({ agentId, message: 'I will not wait' }, { ...call, signal: leaving.signal });
    const reading = (async () => {
      for await (const _event of stream) void _event;
    })();
    // The sentinel: the run is stored (running) once the turn has begun.
    await vi.waitFor(async () => expect((await service!.runs.listRuns({ agentId, page: undefined, since: undefined, until: undefined, status: 'running' }, call)).total).toBe(1), { timeout: 5_000, interval: 20 });
    leaving.abort();
    await reading.catch(() => undefined);
    const cancelled = await vi.waitFor(
      async () => {
        const [found] = (await service!.runs.listRuns({ agentId, page: undefined, since: undefined, until: undefined, status: 'cancelled' }, call)).items;
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(cancelled).toMatchObject({ trigger: 'stream', input: 'I will not wait', error: { code: 'cancelled' } });

    const stats = await service.runs.getAgentRunStats({ agentId, since: undefined, until: undefined }, call);
    expect(stats).toMatchObject({ runs: 2, completed: 0, failed: 1, failureRate: 0.5 });

    // A background run whose model fails ends failed with the reason, told to its watchers and as run.failed.
    fake.chat({ kind: 'error', status: 503 });
    const { run: queued } = await service.runs.startRun({ agentId, message: 'doomed later' }, call);
    const watched = [];
    for await (const event of service.runs.watchRun({ runId: queued!.id, after: 0 }, call)) watched.push(event);
    expect(watched.at(-1)).toMatchObject({ type: 'run.failed', run: { id: queued!.id, status: 'failed', error: { code: 'upstream_error' }, credits: 0 } });
    const [told] = await eventsOf(service.database, tenant.tenantId, 'run.failed');
    expect(told?.data).toMatchObject({ run_id: queued!.id, agent_id: agentId, status: 'failed', error: { code: 'upstream_error' }, credits: 0 });
  });
});

describe('Retention', () => {
  databaseTest('runs begun before RUN_RETENTION_DAYS are deleted with their steps, and runs a stopped process left running are ended as failed, when the service starts', async ({ database }) => {
    const first = await startAgentMemory(database, { env: ENV });
    const tenant = newTenant();
    const agentId = await agentWith(first, tenant, []);
    const old = await first.chat.chat({ agentId, message: 'long ago' }, { principal: tenant.principal });
    const recent = await first.chat.chat({ agentId, message: 'yesterday' }, { principal: tenant.principal });
    const abandoned = await first.chat.chat({ agentId, message: 'cut off' }, { principal: tenant.principal });
    const live = await first.chat.chat({ agentId, message: 'still going' }, { principal: tenant.principal });
    await first.stop();
    await database.query(`update runs set started_at = now() - interval '3 days' where id = $1`, [old.runId]);
    await database.query(`update runs set started_at = now() - interval '1 day' where id = $1`, [recent.runId]);
    // As a process killed mid-turn leaves them: running, no end.
    await database.query(`update runs set status = 'running', completed_at = null, duration_ms = null, started_at = now() - interval '2 hours' where id = $1`, [abandoned.runId]);
    await database.query(`update runs set status = 'running', completed_at = null, duration_ms = null, started_at = now() - interval '1 minute' where id = $1`, [live.runId]);

    const second = await startAgentMemory(database, { env: { ...ENV, RUN_RETENTION_DAYS: '2' } });
    try {
      await vi.waitFor(async () => expect(await database.query(`select 1 from runs where id = $1`, [old.runId])).toHaveLength(0), { timeout: 10_000, interval: 50 });
      expect(await database.query(`select 1 from run_steps where run_id = $1`, [old.runId])).toHaveLength(0);
      expect((await second.runs.getRun({ runId: recent.runId }, { principal: tenant.principal })).run!.input).toBe('yesterday');
      const ended = (await second.runs.getRun({ runId: abandoned.runId }, { principal: tenant.principal })).run!;
      expect(ended).toMatchObject({ status: 'failed', error: { code: 'service_unavailable', message: 'The process running the turn stopped before the turn ended.' } });
      // The start kept its microseconds, which the answer's milliseconds drop.
      expect(Math.abs(ended.durationMs! - (ended.completedAt!.getTime() - ended.startedAt!.getTime()))).toBeLessThanOrEqual(1);
      expect((await second.runs.getRun({ runId: live.runId }, { principal: tenant.principal })).run!.status).toBe('running');
    } finally {
      await second.stop();
    }
  });
});

describe('Background runs', () => {
  async function eventsOfRun(service: AgentMemoryHarness, tenant: TestTenant, runId: string, after = 0) {
    const events = [];
    for await (const event of service.runs.watchRun({ runId, after }, { principal: tenant.principal })) events.push(event);
    return events;
  }

  test('a queued run is run by a worker as the principal that queued it; its events stream, and resume after an id', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, [await httpTool(service, tenant, receiver, 'lookup_order', '/orders')]);
    const { run: queued } = await service.runs.startRun({ agentId, message: 'Please lookup_order {"n": 3}', userId: 'ana' }, call);
    expect(queued).toMatchObject({ trigger: 'background', status: 'queued', input: 'Please lookup_order {"n": 3}', userId: 'ana', output: undefined });

    const events = await eventsOfRun(service, tenant, queued!.id);
    // A status is reported as it changes: queued, when the watch began before a worker claimed the run, then running.
    const statuses = events.filter((event) => event.type === 'run.status').map((event) => event.run!.status);
    expect([['running'], ['queued'], ['queued', 'running']]).toContainEqual(statuses);
    expect(events[0]!.type).toBe('run.status');
    expect(events.filter((event) => event.type !== 'run.status').map((event) => [event.type, event.id ?? null, event.step?.type ?? null])).toEqual([
      ['run.step', 1, 'retrieval'],
      ['run.step', 2, 'model'],
      ['run.step', 3, 'tool'],
      ['run.step', 4, 'model'],
      ['run.completed', 5, null],
    ]);
    const done = events.at(-1)!.run!;
    expect(done).toMatchObject({ status: 'completed', output: expect.stringContaining('lookup_order') });
    expect(done.credits).toBeGreaterThanOrEqual(2);
    // Charged like a turn, to the tenant that queued it: two model rounds. A turn is charged just
    // after the commit its end is streamed from: the charges are waited for, not assumed. (The
    // memory extraction that follows the turn, for its user, is charged on its own, when it ends.)
    const turnCharges = () => service.credits.charges.filter((charge) => charge.tenantId === tenant.tenantId && !charge.reference.startsWith('extraction-'));
    await vi.waitFor(() => expect(turnCharges()).toHaveLength(2), { timeout: 5_000, interval: 20 });
    expect(receiver.received('/orders').at(-1)!.json).toEqual({ n: 3 });
    const [completed] = await eventsOf(service.database, tenant.tenantId, 'run.completed');
    expect(completed!.data).toMatchObject({ run_id: queued!.id, agent_id: agentId, status: 'completed', output: done.output, credits: done.credits });

    // Watched anew once it has ended, it still opens with the run as it is, then every step and the end.
    const again = await eventsOfRun(service, tenant, queued!.id);
    expect(again.map((event) => [event.type, event.id ?? null])).toEqual([
      ['run.status', null],
      ['run.step', 1],
      ['run.step', 2],
      ['run.step', 3],
      ['run.step', 4],
      ['run.completed', 5],
    ]);
    const resumed = await eventsOfRun(service, tenant, queued!.id, 3);
    expect(resumed.map((event) => [event.type, event.id])).toEqual([
      ['run.step', 4],
      ['run.completed', 5],
    ]);
    expect(await eventsOfRun(service, tenant, queued!.id, 5)).toEqual([]);
  });

  test('a run is refused before it is queued as a turn would be; a run that cannot start fails with its reason', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agentId = await agentWith(service, tenant, []);
    expect((await expectError(service.runs.startRun({ agentId, message: '   ' }, call), 'validation_error')).details.map((detail) => detail.field)).toEqual(['message']);
    await expectError(service.runs.startRun({ agentId, message: 'hi', sessionId: 'ses_01JD0000000000000000000000' }, call), 'not_found');
    await expectError(service.runs.startRun({ agentId: 'agt_01JD0000000000000000000000', message: 'hi' }, call), 'not_found');
    await expectError(service.runs.startRun({ agentId, message: 'hi' }, { principal: principalOf(tenant.tenantId, 'viewer') }), 'forbidden');

    // The session goes between queueing and running: the run fails, saying why.
    const first = await service.chat.chat({ agentId, message: 'hello' }, call);
    await service.database.query(`update runs set status = 'completed' where trigger = 'background'`);
    const { run } = await service.runs.startRun({ agentId, message: 'later', sessionId: first.sessionId }, call);
    await service.database.query(`delete from chat_sessions where id = $1`, [first.sessionId]);
    const events = await eventsOfRun(service, tenant, run!.id);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', run: { status: 'failed', error: { code: 'not_found' } } });
  });

  test('cancel stops a running run at its next write; only background runs that have not ended can be cancelled', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const slow = await startReceiver(() => ({ hold: 'answer' }));
    try {
      const { tool } = await service.tools.createTool(
        { name: 'slow_tool', description: 'Hangs', type: 'http', configJson: JSON.stringify({ url: slow.url('/slow') }), inputSchemaJson: JSON.stringify({ type: 'object' }), requiresApproval: false },
        call,
      );
      const agentId = await agentWith(service, tenant, [tool!.id]);
      const { run } = await service.runs.startRun({ agentId, message: 'use slow_tool {}' }, call);
      // The sentinel: the tool's server holds the call, so the run is mid-turn.
      await vi.waitFor(() => expect(slow.received('/slow')).toHaveLength(1), { timeout: 10_000, interval: 20 });
      const { run: cancelled } = await service.runs.cancelRun({ runId: run!.id }, call);
      expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
      const events = await eventsOfRun(service, tenant, run!.id);
      expect(events.at(-1)!.type).toBe('run.cancelled');
      await expectError(service.runs.cancelRun({ runId: run!.id }, call), 'conflict');
      const chat = await service.chat.chat({ agentId: await agentWith(service, tenant, []), message: 'a turn' }, call);
      await expectError(service.runs.cancelRun({ runId: chat.runId }, call), 'conflict');
      await expectError(service.runs.cancelRun({ runId: run!.id }, { principal: newTenant().principal }), 'not_found');
      // Nothing of the cancelled turn was stored or charged.
      expect(await service.database.query(`select 1 from chat_messages m join chat_sessions s on s.id = m.session_id where s.agent_id = $1`, [agentId])).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  test('a run whose replica stopped is taken up again when none of its rounds asked for a tool call, and fails when one did', async ({ service }) => {
    const tenant = newTenant();
    const agentId = await agentWith(service, tenant, []);
    // As a replica that claimed the runs and stopped leaves them: running, their leases run out.
    const stopped = async (steps: [string, Record<string, unknown>][]) => {
      const id = `run_${newId('run').slice(4)}`;
      await service.database.query(
        `insert into runs (id, tenant_id, agent_id, agent_version, trigger, status, input, started_at, actor, request, lease_owner, lease_until, attempts)
         values ($1, $2, $3, 1, 'background', 'running', 'again', now(), $4, '{"sessionId":null,"userId":null}', 'gone', now() - interval '1 second', 1)`,
        [id, tenant.tenantId, agentId, JSON.stringify({ kind: 'user', userId: tenant.principal.userId, tenantId: tenant.tenantId, role: 'member', scopes: [] })],
      );
      for (const [index, [type, data]] of steps.entries()) {
        await service.database.query(`insert into run_steps (run_id, seq, type, started_at, duration_ms, data) values ($1, $2, $3, now(), 1, $4)`, [id, index + 1, type, JSON.stringify(data)]);
      }
      return id;
    };
    const clean = await stopped([['retrieval', { query: 'again', items: [] }], ['model', { round: 1, tool_calls: [] }]]);
    // Its round asked for a call: stored before the call ran, so the call may have run.
    const effected = await stopped([['retrieval', { query: 'again', items: [] }], ['model', { round: 1, tool_calls: [{ id: 'call_x', name: 'refund' }] }]]);
    // A worker polls for runs whose lease ran out: nobody wakes it.
    const again = await eventsOfRun(service, tenant, clean);
    expect(again.at(-1)).toMatchObject({ type: 'run.completed', run: { status: 'completed' } });
    expect(again.filter((event) => event.type === 'run.step').map((event) => event.step!.type)).toEqual(['retrieval', 'model']);
    const refused = await eventsOfRun(service, tenant, effected);
    expect(refused.at(-1)).toMatchObject({ type: 'run.failed', run: { status: 'failed', error: { code: 'service_unavailable', message: expect.stringContaining('no call runs twice') } } });
    expect((await eventsOf(service.database, tenant.tenantId, 'run.failed')).map((event) => event.data['run_id'])).toEqual([effected]);
  });
});

describe('Rounds left uncharged', () => {
  databaseTest('a round stored but never charged (its process stopped first) is charged once by the next sweep, as its own reference', async ({ database }) => {
    const first = await startAgentMemory(database, { env: ENV });
    const tenant = newTenant();
    const agentId = await agentWith(first, tenant, []);
    const reply = await first.chat.chat({ agentId, message: 'served, then the process died' }, { principal: tenant.principal });
    await first.stop();
    // As a kill between the turn's commit and its charge leaves it.
    await database.query(`update chat_messages set charged_at = null, created_at = now() - interval '1 minute' where id = $1`, [reply.id]);

    const second = await startAgentMemory(database, { env: ENV });
    try {
      await vi.waitFor(async () => expect(await database.query(`select 1 from chat_messages where id = $1 and charged_at is not null`, [reply.id])).toHaveLength(1), { timeout: 10_000, interval: 50 });
      expect(second.credits.chargeOf(tenant.tenantId, reply.id)).toBe(reply.credits);
    } finally {
      await second.stop();
    }
  });
});
