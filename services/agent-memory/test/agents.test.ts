import { describe, expect } from 'vitest';
import { agentMemoryTest, eventsOf, expectError, newTenant, principalOf } from './support/harness.js';

const test = agentMemoryTest();

describe('CreateAgent', () => {
  test('stores the agent with defaults and records agent.created with the agent as data', async ({ service }) => {
    const tenant = newTenant();
    const { agent } = await service.agents.createAgent({ name: ' Support bot ', type: 'support', memoryTypes: [], tools: [], configJson: '{"temperature":0.3}' }, { principal: tenant.principal });
    expect(agent).toMatchObject({ name: 'Support bot', type: 'support', memoryTypes: ['semantic', 'episodic'], status: 'active', config: { temperature: 0.3 } });
    expect(agent!.id).toMatch(/^agt_[0-9A-HJKMNP-TV-Z]{26}$/);
    const events = await eventsOf(service.database, tenant.tenantId, 'agent.created');
    expect(events).toEqual([{ data: expect.objectContaining({ id: agent!.id, name: 'Support bot', type: 'support', memory_types: ['semantic', 'episodic'], config: { temperature: 0.3 } }) }]);
  });

  test('names every bad field, and stores nothing', async ({ service }) => {
    const tenant = newTenant();
    const refused = service.agents.createAgent(
      { name: '  ', type: 'Support Bot', memoryTypes: ['semantic', 'dreams'], tools: [], configJson: '{"temperature":3,"top_p":-1,"max_tokens":1.5,"voice":"x"}' },
      { principal: tenant.principal },
    );
    const error = await expectError(refused, 'validation_error');
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['config.max_tokens', 'config.temperature', 'config.top_p', 'config.voice', 'memory_types[1]', 'name', 'type'].sort());
    const { total } = await service.agents.listAgents({ page: undefined }, { principal: tenant.principal });
    expect(total).toBe(0);
  });

  test('refuses a viewer', async ({ service }) => {
    const tenant = newTenant();
    await expectError(service.agents.createAgent({ name: 'x', type: 'x', memoryTypes: [], tools: [] }, { principal: principalOf(tenant.tenantId, 'viewer') }), 'forbidden');
  });
});

describe('ListAgents, GetAgent', () => {
  test('pages newest first and never shows another tenant the agents', async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const created = [];
    for (const name of ['a', 'b', 'c']) created.push(await service.createAgent(tenant, { name }));
    const first = await service.agents.listAgents({ page: { page: 1, perPage: 2 } }, { principal: tenant.principal });
    expect(first.total).toBe(3);
    expect(first.agents.map((agent) => agent.name)).toEqual(['c', 'b']);
    const second = await service.agents.listAgents({ page: { page: 2, perPage: 2 } }, { principal: tenant.principal });
    expect(second.agents.map((agent) => agent.name)).toEqual(['a']);
    expect((await service.agents.listAgents({ page: undefined }, { principal: stranger.principal })).total).toBe(0);
    await expectError(service.agents.getAgent({ agentId: created[0]!.id }, { principal: stranger.principal }), 'not_found');
    await expectError(service.agents.listAgents({ page: { page: 1, perPage: 101 } }, { principal: tenant.principal }), 'validation_error');
  });
});

describe('UpdateAgent', () => {
  test('PATCH changes only what is sent; PUT replaces and resets the rest; both record agent.updated', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: '{"model":"gpt-x","system_prompt":"Be brief."}' });
    const patched = await service.agents.updateAgent(
      { agentId: agent.id, replace: false, description: 'Answers questions', setMemoryTypes: false, memoryTypes: [], setTools: false, tools: [], configJson: '{"temperature":1}' },
      { principal: tenant.principal },
    );
    expect(patched.agent).toMatchObject({ name: 'Helper', description: 'Answers questions', config: { temperature: 1 } });
    expect(patched.agent!.config!.model).toBeUndefined();

    const replaced = await service.agents.updateAgent({ agentId: agent.id, replace: true, name: 'Renamed', type: 'assistant', setMemoryTypes: false, memoryTypes: [], setTools: false, tools: [] }, { principal: tenant.principal });
    expect(replaced.agent).toMatchObject({ name: 'Renamed', memoryTypes: ['semantic', 'episodic'], config: {} });
    expect(replaced.agent!.description).toBeUndefined();
    expect(await eventsOf(service.database, tenant.tenantId, 'agent.updated')).toHaveLength(2);

    const incomplete = await expectError(service.agents.updateAgent({ agentId: agent.id, replace: true, setMemoryTypes: false, memoryTypes: [], setTools: false, tools: [] }, { principal: tenant.principal }), 'validation_error');
    expect(incomplete.details.map((detail) => detail.field).sort()).toEqual(['name', 'type']);
  });

  test('is not_found for another tenant, before any validation', async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const agent = await service.createAgent(tenant);
    await expectError(service.agents.updateAgent({ agentId: agent.id, replace: false, type: 'BAD', setMemoryTypes: false, memoryTypes: [], setTools: false, tools: [] }, { principal: stranger.principal }), 'not_found');
  });
});

describe('DeleteAgent', () => {
  test('removes the agent with its sessions, messages, memory, documents and vectors', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const call = { principal: tenant.principal };
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The customer prefers e-mail.' }, call);
    await service.documents.addTextDocument({ agentId: agent.id, content: 'A handbook. '.repeat(300) }, call);
    await service.chat.chat({ agentId: agent.id, message: 'Hello there' }, call);

    await service.agents.deleteAgent({ agentId: agent.id }, call);
    await expectError(service.agents.getAgent({ agentId: agent.id }, call), 'not_found');
    for (const table of ['memory_items', 'memory_documents', 'chat_sessions']) {
      expect(await service.database.query(`select 1 from ${table} where agent_id = $1`, [agent.id]), table).toEqual([]);
    }
    expect(await service.database.query(`select 1 from chat_messages where tenant_id = $1`, [tenant.tenantId])).toEqual([]);
    await expectError(service.memory.searchMemory({ agentId: agent.id, query: 'e-mail', topK: 5 }, call), 'not_found');
    await expectError(service.agents.deleteAgent({ agentId: agent.id }, call), 'not_found');
  });
});
