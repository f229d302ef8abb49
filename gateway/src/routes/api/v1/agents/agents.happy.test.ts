import { PrincipalKind } from '@agent-platform/kit/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, ISO_MS, matching, newAccount, startHarness, type Account, type Harness } from '../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const AGENT_ID = /^agt_[0-9A-HJKMNP-TV-Z]{26}$/;

async function newAgent(account: Account, payload: Record<string, unknown> = {}): Promise<{ id: string }> {
  const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'Helper', type: 'support', ...payload } });
  if (created.statusCode !== 201) throw new Error(`agent: ${created.statusCode} ${created.body}`);
  return created.json<{ id: string }>();
}

describe('POST /agents', () => {
  it('answers 201 with every agent field and forwards config as JSON text, unknown keys included', async () => {
    const account = await newAccount(h.app);
    const payload = {
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic'],
      config: { model: 'gpt-4o-mini', temperature: 0.2, colour: 'blue' },
      unknown_field: 'ignored',
    };
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toEqual({
      id: matching(AGENT_ID),
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic'],
      config: { model: 'gpt-4o-mini', temperature: 0.2 },
      status: 'active',
      created_at: matching(ISO_MS),
      updated_at: matching(ISO_MS),
    });
    const call = h.agentMemory.callsOf('createAgent').at(-1);
    expect(call?.request).toEqual({
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memoryTypes: ['semantic'],
      configJson: JSON.stringify(payload.config),
    });
    expect(call?.principal).toMatchObject({ kind: PrincipalKind.KIND_USER, tenantId: account.tenantId, userId: account.userId, role: 'owner' });
    expect(call?.requestId).toBe(created.headers['x-request-id']);
  });

  it('sends no config and no memory types when they are absent; description is null and config {} in the answer', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'Plain', type: 'assistant' } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ description: null, config: {}, memory_types: ['semantic', 'episodic'] });
    expect(h.agentMemory.lastRequest('createAgent')).toEqual({ name: 'Plain', type: 'assistant', memoryTypes: [] });
  });
});

describe('GET /agents', () => {
  it('answers {agents, total, page, per_page} and forwards the page asked for', async () => {
    const account = await newAccount(h.app);
    const first = await newAgent(account, { name: 'first' });
    const second = await newAgent(account, { name: 'second' });
    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { page: '1', per_page: '5' } });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      agents: [expect.objectContaining({ id: second.id, name: 'second' }), expect.objectContaining({ id: first.id, name: 'first' })],
      total: 2,
      page: 1,
      per_page: 5,
    });
    expect(h.agentMemory.lastRequest('listAgents')).toEqual({ page: { page: 1, perPage: 5 } });
    const defaults = await as(h.app, account.token, { method: 'GET', url: '/v1/agents' });
    expect(defaults.json()).toMatchObject({ total: 2, page: 1, per_page: 20 });
  });
});

describe('GET, PATCH, PUT and DELETE /agents/{agent_id}', () => {
  it('reads one agent', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(account, { config: { top_p: 0.5, max_tokens: 256, system_prompt: 'Be brief.' } });
    const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: agent.id, config: { top_p: 0.5, max_tokens: 256, system_prompt: 'Be brief.' } });
    expect(h.agentMemory.lastRequest('getAgent')).toEqual({ agentId: agent.id });
  });

  it('PATCH sends only what changes; memory_types and config replace the whole list or object', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(account);
    const named = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/agents/${agent.id}`, payload: { name: 'Renamed' } });
    expect(named.statusCode).toBe(200);
    expect(named.json()).toMatchObject({ id: agent.id, name: 'Renamed', type: 'support' });
    expect(h.agentMemory.lastRequest('updateAgent')).toEqual({ agentId: agent.id, replace: false, name: 'Renamed', setMemoryTypes: false, memoryTypes: [] });

    const config = { temperature: 1.5, extra: true };
    await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/agents/${agent.id}`, payload: { memory_types: ['procedural'], config } });
    expect(h.agentMemory.lastRequest('updateAgent')).toEqual({
      agentId: agent.id,
      replace: false,
      setMemoryTypes: true,
      memoryTypes: ['procedural'],
      configJson: JSON.stringify(config),
    });
  });

  it('PUT replaces the agent: replace is set and what is left out is absent', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(account, { description: 'old', config: { model: 'm' } });
    const replaced = await as(h.app, account.token, { method: 'PUT', url: `/api/v1/agents/${agent.id}`, payload: { name: 'New', type: 'assistant' } });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ id: agent.id, name: 'New', type: 'assistant', description: null, config: {} });
    expect(h.agentMemory.lastRequest('updateAgent')).toEqual({ agentId: agent.id, replace: true, name: 'New', type: 'assistant', setMemoryTypes: false, memoryTypes: [] });
  });

  it('DELETE answers {success: true, message}', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(account);
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/agents/${agent.id}` });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: expect.any(String) as unknown });
    expect(h.agentMemory.lastRequest('deleteAgent')).toEqual({ agentId: agent.id });
    expect((await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` })).statusCode).toBe(404);
  });
});
