import { PrincipalKind } from '@agent-platform/kit/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent, type AgentBody } from '../support/agents.js';
import { lastCall, principalOf } from '../support/calls.js';
import { as, expectError, ISO_MS, matching, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const AGENT_ID = /^agt_[0-9A-HJKMNP-TV-Z]{26}$/;

async function read(account: Account, agentId: string): Promise<AgentBody> {
  const got = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agentId}` });
  expect(got.statusCode, got.body).toBe(200);
  return got.json<AgentBody>();
}

describe('POST /agents', () => {
  it('answers 201 with every agent field, ignores unknown fields, and acts as the caller', async () => {
    const account = await newAccount(h.app);
    const payload = {
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic'],
      config: { model: 'gpt-4o-mini', temperature: 0.2 },
      unknown_field: 'ignored',
    };
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload });
    expect(created.statusCode, created.body).toBe(201);
    const agent = created.json<AgentBody>();
    expect(agent).toEqual({
      id: matching(AGENT_ID),
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic'],
      config: { model: 'gpt-4o-mini', temperature: 0.2 },
      memory_extraction: 'per_user',
      tools: [],
      status: 'active',
      version: 1,
      created_at: matching(ISO_MS),
      updated_at: agent.created_at,
    });
    expect(await read(account, agent.id)).toEqual(agent);
    const call = lastCall(h.agentMemory, 'CreateAgent');
    expect(principalOf(call)).toMatchObject({ kind: PrincipalKind.KIND_USER, tenantId: account.tenantId, userId: account.userId, role: 'owner' });
    expect(call?.requestId).toBe(created.headers['x-request-id']);
  });

  it('without description, memory_types and config: description null, the default memory types, config {}', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'Plain', type: 'assistant' } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ name: 'Plain', type: 'assistant', description: null, config: {}, memory_types: ['semantic', 'episodic'] });
  });
});

describe('GET /agents', () => {
  it('answers {agents, total, page, per_page}, newest first, the page asked for', async () => {
    const account = await newAccount(h.app);
    const first = await newAgent(h.app, account.token, { name: 'first' });
    const second = await newAgent(h.app, account.token, { name: 'second' });
    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { page: '1', per_page: '5' } });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({ agents: [second, first], total: 2, page: 1, per_page: 5 });

    const paged = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { page: '2', per_page: '1' } });
    expect(paged.json()).toEqual({ agents: [first], total: 2, page: 2, per_page: 1 });
    const defaults = await as(h.app, account.token, { method: 'GET', url: '/v1/agents' });
    expect(defaults.json()).toEqual({ agents: [second, first], total: 2, page: 1, per_page: 20 });
  });

  it("lists only the caller's tenant's agents", async () => {
    const [alice, bob] = [await newAccount(h.app), await newAccount(h.app)];
    await newAgent(h.app, alice.token);
    expect((await as(h.app, bob.token, { method: 'GET', url: '/api/v1/agents' })).json()).toMatchObject({ agents: [], total: 0 });
  });
});

describe('GET, PATCH, PUT and DELETE /agents/{agent_id}', () => {
  it('reads one agent with every config key it was given', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { top_p: 0.5, max_tokens: 256, system_prompt: 'Be brief.' } });
    const got = await read(account, agent.id);
    expect(got).toEqual(agent);
    expect(got.config).toEqual({ top_p: 0.5, max_tokens: 256, system_prompt: 'Be brief.' });
  });

  it('memory_extraction: each setting kept as given, and what it comes to answered beside it (decisions §14.2)', async () => {
    const account = await newAccount(h.app);
    for (const [setting, memoryTypes, resolved] of [
      [undefined, ['semantic'], 'per_user'],
      [true, ['semantic'], 'per_user'],
      ['shared', ['semantic', 'episodic'], 'shared'],
      [false, ['semantic'], 'off'],
      [undefined, ['episodic'], 'off'],
    ] as const) {
      const agent = await newAgent(h.app, account.token, { memory_types: [...memoryTypes], config: setting === undefined ? {} : { memory_extraction: setting } });
      expect([agent.config, agent.memory_extraction]).toEqual([setting === undefined ? {} : { memory_extraction: setting }, resolved]);
      expect((await read(account, agent.id)).memory_extraction).toBe(resolved);
    }
    for (const [memoryTypes, setting] of [
      [['semantic'], 'everyone'],
      [['episodic'], 'shared'],
    ] as const) {
      const refused = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'x', type: 'assistant', memory_types: memoryTypes, config: { memory_extraction: setting } } });
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.json<{ details: { field: string }[] }>().details.map((detail) => detail.field)).toEqual(['config.memory_extraction']);
    }
  });

  it('PATCH changes only what is sent; memory_types and config replace the whole list or object', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { description: 'kept', config: { model: 'm', temperature: 0.5 } });
    const url = `/api/v1/agents/${agent.id}`;

    const named = await as(h.app, account.token, { method: 'PATCH', url, payload: { name: 'Renamed' } });
    expect(named.statusCode, named.body).toBe(200);
    const renamed = named.json<AgentBody>();
    expect(renamed).toEqual({ ...agent, name: 'Renamed', updated_at: matching(ISO_MS) });
    expect(await read(account, agent.id)).toEqual(renamed);

    const replaced = await as(h.app, account.token, { method: 'PATCH', url, payload: { memory_types: ['procedural'], config: { temperature: 1.5 } } });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(await read(account, agent.id)).toEqual({
      ...agent,
      name: 'Renamed',
      memory_types: ['procedural'],
      config: { temperature: 1.5 },
      // Without semantic memory there is nowhere to put facts.
      memory_extraction: 'off',
      // A rename kept version 1 (decisions §16); new settings make version 2.
      version: 2,
      updated_at: matching(ISO_MS),
    });
  });

  it('PUT replaces the agent: what is left out is reset; id, status and created_at stay', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { description: 'old', memory_types: ['procedural'], config: { model: 'm' } });
    const replaced = await as(h.app, account.token, { method: 'PUT', url: `/api/v1/agents/${agent.id}`, payload: { name: 'New', type: 'assistant' } });
    expect(replaced.statusCode, replaced.body).toBe(200);
    const expected = { ...agent, name: 'New', type: 'assistant', description: null, memory_types: ['semantic', 'episodic'], config: {}, memory_extraction: 'per_user', version: 2, updated_at: matching(ISO_MS) };
    expect(replaced.json()).toEqual(expected);
    expect(await read(account, agent.id)).toEqual(expected);
  });

  it('DELETE answers {success: true, message}; the agent is gone from reads and lists', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/agents/${agent.id}` });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: matching(/\S/) });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` }), 404, 'not_found');
    expect((await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' })).json()).toMatchObject({ agents: [], total: 0 });
    expectError(await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/agents/${agent.id}` }), 404, 'not_found');
  });
});
