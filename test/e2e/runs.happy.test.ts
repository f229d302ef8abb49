import { randomBytes } from 'node:crypto';
import { streamChat, type AgentPlatformClient, type ChatMessage, type ChatRequest, type RunDetail } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount, newApiKey } from './harness/client.js';
import { expectStatus, statusOf } from './harness/results.js';
import { allEvents, readEventStream, type SseEvent } from './harness/sse.js';

/** decisions §16 through REST: every turn is a run with its steps, listed, scored and summed. */

async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Traced', type: 'assistant', config: { memory_extraction: false } } }), 201).id;
}

async function chat(client: AgentPlatformClient, agentId: string, body: ChatRequest): Promise<ChatMessage> {
  return expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body }));
}

async function getRun(client: AgentPlatformClient, runId: string): Promise<RunDetail> {
  return expectStatus(await client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: runId } } }));
}

describe('runs', () => {
  it('a chat turn answers its run_id; GET /runs/{run_id} shows the run and its steps', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const reply = await chat(client, agentId, { message: 'Where is my order?', user_id: 'customer-1' });
    expect(reply.run_id).toMatch(id('run'));

    const run = await getRun(client, reply.run_id);
    expect(run).toEqual({
      id: reply.run_id,
      agent_id: agentId,
      agent_version: 1,
      session_id: reply.session_id,
      user_id: 'customer-1',
      trigger: 'chat',
      status: 'completed',
      input: 'Where is my order?',
      output: reply.content,
      usage: reply.usage,
      credits: reply.credits,
      error: null,
      parent_run_id: null,
      // No traceparent came, and the platform records spans only when it exports them.
      trace_id: null,
      started_at: expect.stringMatching(ISO_MS),
      completed_at: expect.stringMatching(ISO_MS),
      duration_ms: expect.any(Number),
      feedback: null,
      steps: [
        { type: 'retrieval', started_at: expect.stringMatching(ISO_MS), duration_ms: expect.any(Number), query: 'Where is my order?', items: [], citations: [] },
        {
          type: 'model',
          started_at: expect.stringMatching(ISO_MS),
          duration_ms: expect.any(Number),
          round: 1,
          model: 'offline',
          tokens: { prompt: reply.usage.prompt_tokens, completion: reply.usage.completion_tokens, total: reply.usage.total_tokens },
          credits: reply.credits,
          finish_reason: 'stop',
          tool_calls: [],
        },
      ],
    });
    expect(Date.parse(run.completed_at!) - Date.parse(run.started_at)).toBe(run.duration_ms);
    // The session's messages name the run of their turn.
    const messages = expectStatus(
      await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agentId, session_id: reply.session_id } } }),
    );
    expect(messages.items.map((message) => [message.role, message.run_id])).toEqual([
      ['user', reply.run_id],
      ['assistant', reply.run_id],
    ]);
  });

  it("a turn whose request carries a traceparent links that trace", async () => {
    const api = new Api();
    const { client, accessToken } = await newAccount(api);
    const agentId = await createAgent(client);
    const traceId = randomBytes(16).toString('hex');
    const traced = await api.post<ChatMessage>(`/api/v1/agents/${agentId}/chat`, {
      token: accessToken,
      json: { message: 'Follow me' },
      headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    });
    expect(traced.status).toBe(200);
    expect((await getRun(client, traced.body.run_id)).trace_id).toBe(traceId);
  });

  it('a streamed turn names its run on every event; the list filters by trigger and pages by cursor', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const first = await chat(client, agentId, { message: 'one' });
    const events = [];
    for await (const event of streamChat(client, agentId, { message: 'two', session_id: first.session_id })) events.push(event);
    const streamed = events.at(-1);
    if (streamed?.event !== 'message.completed') throw new Error(`the stream ended with ${JSON.stringify(streamed)}`);
    for (const event of events.slice(0, -1)) expect(event.data).toMatchObject({ run_id: streamed.data.run_id });

    const list = (query: Record<string, string | number>) => client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId }, query } });
    const all = expectStatus(await list({}));
    expect(all.items.map((run) => [run.id, run.trigger])).toEqual([
      [streamed.data.run_id, 'stream'],
      [first.run_id, 'chat'],
    ]);
    expect(all).toMatchObject({ total: 2, next_cursor: null });
    expect(all.items[0]).not.toHaveProperty('steps');

    const page = expectStatus(await list({ limit: 1 }));
    expect(page.items.map((run) => run.id)).toEqual([streamed.data.run_id]);
    const rest = expectStatus(await list({ limit: 1, cursor: page.next_cursor! }));
    expect(rest.items.map((run) => run.id)).toEqual([first.run_id]);
    expect(expectStatus(await list({ trigger: 'stream' })).items.map((run) => run.id)).toEqual([streamed.data.run_id]);
    expect(expectStatus(await list({ session_id: first.session_id, since: first.created_at.replace('Z', '+00:00') })).total).toBeGreaterThanOrEqual(1);
    expect(expectStatus(await list({ min_duration_ms: 86_400_000 })).items).toEqual([]);
  });

  it('feedback and stats', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const reply = await chat(client, agentId, { message: 'Rate me' });
    const scored = expectStatus(await client.POST('/api/v1/runs/{run_id}/feedback', { params: { path: { run_id: reply.run_id } }, body: { score: -1, comment: 'Wrong order' } }));
    expect(scored.feedback).toEqual({ score: -1, comment: 'Wrong order', by: expect.stringMatching(id('usr')), at: expect.stringMatching(ISO_MS) });

    const stats = expectStatus(await client.GET('/api/v1/agents/{agent_id}/stats', { params: { path: { agent_id: agentId } } }));
    expect(stats).toEqual({
      runs: 1,
      completed: 1,
      failed: 0,
      failure_rate: 0,
      p50_duration_ms: expect.any(Number),
      p95_duration_ms: expect.any(Number),
      usage: reply.usage,
      credits: reply.credits,
      feedback_mean: -1,
      feedback_count: 1,
      since: expect.stringMatching(ISO_MS),
      until: expect.stringMatching(ISO_MS),
    });
  });

  it('bad input is a §2 error; another tenant sees nothing; a key needs agents:read to read and agents:write to score', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const agentId = await createAgent(owner.client);
    const reply = await chat(owner.client, agentId, { message: 'private' });

    const other = await newAccount(api);
    expect(await statusOf(other.client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: reply.run_id } } }))).toBe(404);
    expect(await statusOf(other.client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } } }))).toBe(404);
    expect(await statusOf(owner.client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: 'run_nope' } } }))).toBe(404);

    const badTime = await api.request('GET', `/api/v1/agents/${agentId}/runs?since=yesterday`, { token: owner.accessToken });
    expect(badTime.status).toBe(400);
    expect(badTime.body).toMatchObject({ error: 'invalid_request' });
    const badStatus = await api.request('GET', `/api/v1/agents/${agentId}/runs?status=done`, { token: owner.accessToken });
    expect(badStatus.status).toBe(422);
    expect(badStatus.body).toMatchObject({ error: 'validation_error', details: [{ field: 'status' }] });
    const badScore = await api.request('POST', `/api/v1/runs/${reply.run_id}/feedback`, { token: owner.accessToken, json: { score: 5 } });
    expect(badScore.status).toBe(422);
    expect(badScore.body).toMatchObject({ error: 'validation_error', details: [{ field: 'score' }] });
    const badRange = await api.request('GET', `/api/v1/agents/${agentId}/stats?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z`, { token: owner.accessToken });
    expect(badRange.status).toBe(422);

    const reader = await newApiKey(api, owner, ['agents:read']);
    expect(await statusOf(reader.client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: reply.run_id } } }))).toBe(200);
    expect(await statusOf(reader.client.POST('/api/v1/runs/{run_id}/feedback', { params: { path: { run_id: reply.run_id } }, body: { score: 1 } }))).toBe(403);
    const memoryOnly = await newApiKey(api, owner, ['memory:read']);
    expect(await statusOf(memoryOnly.client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } } }))).toBe(403);
  });

  it('a background run answers 202, runs without a connection, and its events stream with ids, resumable from Last-Event-ID', async () => {
    const api = new Api();
    const { client, accessToken } = await newAccount(api);
    const agentId = await createAgent(client);
    const queued = await client.POST('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } }, body: { message: 'Work on this while I am away', user_id: 'ana' } });
    expect(queued.response.status).toBe(202);
    expect(queued.data).toMatchObject({ id: expect.stringMatching(id('run')), trigger: 'background', status: 'queued', user_id: 'ana', output: null });
    const runId = queued.data!.id;

    const follow = async (lastEventId?: string): Promise<SseEvent[]> => {
      const response = await api.fetch(new URL(`/api/v1/runs/${runId}/events`, api.baseUrl), {
        headers: { authorization: `Bearer ${accessToken}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return allEvents(readEventStream(response.body!));
    };
    const events = await follow();
    expect(events[0]!.type).toBe('run.status');
    expect(events.slice(1).map((event) => [event.type, event.lastEventId])).toEqual([
      ['run.step', '1'],
      ['run.step', '2'],
      ['run.completed', '3'],
    ]);
    expect(JSON.parse(events[1]!.data)).toMatchObject({ type: 'retrieval', query: 'Work on this while I am away' });
    const done = JSON.parse(events.at(-1)!.data) as { status: string; output: string };
    expect(done).toMatchObject({ status: 'completed', output: expect.stringContaining('Work on this while I am away') });
    expect((await getRun(client, runId)).steps.map((step) => step.type)).toEqual(['retrieval', 'model']);

    const resumed = await follow('2');
    expect(resumed.map((event) => [event.type, event.lastEventId])).toEqual([['run.completed', '3']]);
    const viaQuery = await api.get(`/api/v1/runs/${runId}/events`, { token: accessToken, query: { after: 3 } });
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.body).toBe('');

    const ended = await client.POST('/api/v1/runs/{run_id}/cancel', { params: { path: { run_id: runId } } });
    expect(ended.response.status).toBe(409);
    const refused = await client.POST('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } }, body: { message: 'x', session_id: 'ses_01JD0000000000000000000000' } });
    expect(refused.response.status).toBe(404);
  });
});
