import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent, type AgentBody } from '../support/agents.js';
import { as, expectError, ISO_MS, matching, newAccount, newApiKey, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

interface VersionSummary {
  version: number;
  created_at: string;
  created_by: string | null;
}

async function patch(account: Account, agentId: string, payload: Record<string, unknown>): Promise<AgentBody> {
  const patched = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/agents/${agentId}`, payload });
  expect(patched.statusCode, patched.body).toBe(200);
  return patched.json<AgentBody>();
}

describe('agent versions (decisions §16)', () => {
  it('are made by create and by changes of config, tools or memory_types, listed newest first by page and read with their settings', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { model: 'first', temperature: 0.2 } });
    expect(agent.version).toBe(1);
    expect((await patch(account, agent.id, { config: { model: 'second' } })).version).toBe(2);
    expect((await patch(account, agent.id, { name: 'Renamed', description: 'Only for people' })).version).toBe(2);
    expect((await patch(account, agent.id, { memory_types: ['semantic'] })).version).toBe(3);

    const page = async (query: Record<string, string>) => as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/versions`, query });
    const first = await page({ page: '1', per_page: '2' });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({
      items: [
        { version: 3, created_at: matching(ISO_MS), created_by: account.userId },
        { version: 2, created_at: matching(ISO_MS), created_by: account.userId },
      ],
      total: 3,
      page: 1,
      per_page: 2,
    });
    expect((await page({ page: '2', per_page: '2' })).json<{ items: VersionSummary[] }>().items.map((item) => item.version)).toEqual([1]);

    const one = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/versions/1` });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual({
      version: 1,
      created_at: agent.created_at,
      created_by: account.userId,
      memory_types: ['semantic', 'episodic'],
      config: { model: 'first', temperature: 0.2 },
      tools: [],
    });
  });

  it('restore answers the agent at a new version with the settings restored, its name kept', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { model: 'first' } });
    await patch(account, agent.id, { name: 'Renamed', config: { model: 'second' }, memory_types: ['episodic'] });

    const restored = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/versions/1/restore` });
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toMatchObject({ id: agent.id, name: 'Renamed', version: 3, config: { model: 'first' }, memory_types: ['semantic', 'episodic'] });
    const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` });
    expect(read.json()).toEqual(restored.json());
    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' });
    expect(listed.json<{ agents: AgentBody[] }>().agents[0]).toMatchObject({ id: agent.id, version: 3 });
  });

  it('answer 400 for a version that is not a number, 422 for one below 1, 404 for one that does not exist or an agent of another tenant', async () => {
    const [account, stranger] = [await newAccount(h.app), await newAccount(h.app)];
    const agent = await newAgent(h.app, account.token);
    const url = `/api/v1/agents/${agent.id}/versions`;
    expectError(await as(h.app, account.token, { method: 'GET', url: `${url}/one` }), 400, 'invalid_request', ['version']);
    expectError(await as(h.app, account.token, { method: 'POST', url: `${url}/1.5/restore` }), 400, 'invalid_request', ['version']);
    expectError(await as(h.app, account.token, { method: 'GET', url: `${url}/0` }), 422, 'validation_error', ['version']);
    expectError(await as(h.app, account.token, { method: 'GET', url: `${url}/-1` }), 422, 'validation_error', ['version']);
    expectError(await as(h.app, account.token, { method: 'GET', url, query: { per_page: '101' } }), 422, 'validation_error', ['per_page']);
    expect(expectError(await as(h.app, account.token, { method: 'GET', url: `${url}/2` }), 404, 'not_found').message).toBe('Agent version not found.');
    expectError(await as(h.app, account.token, { method: 'POST', url: `${url}/2/restore` }), 404, 'not_found');

    for (const request of [{ method: 'GET', url }, { method: 'GET', url: `${url}/1` }, { method: 'POST', url: `${url}/1/restore` }] as const) {
      expect(expectError(await as(h.app, stranger.token, request), 404, 'not_found').message, request.url).toBe('Agent not found.');
    }
    const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` });
    expect(read.json<AgentBody>().version).toBe(1);
  });

  it('are read with agents:read and restored with agents:write', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const reader = await newApiKey(h.app, account, ['agents:read']);
    const url = `/api/v1/agents/${agent.id}/versions`;
    expect((await as(h.app, reader.key, { method: 'GET', url })).statusCode).toBe(200);
    expect((await as(h.app, reader.key, { method: 'GET', url: `${url}/1` })).statusCode).toBe(200);
    expect(expectError(await as(h.app, reader.key, { method: 'POST', url: `${url}/1/restore` }), 403, 'forbidden').message).toContain('agents:write');
    const writer = await newApiKey(h.app, account, ['agents:write']);
    expectError(await as(h.app, writer.key, { method: 'GET', url }), 403, 'forbidden');
    const restored = await as(h.app, writer.key, { method: 'POST', url: `${url}/1/restore` });
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json<AgentBody>().version).toBe(2);
  });
});
