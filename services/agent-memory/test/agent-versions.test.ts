import { createLogger } from '@agent-platform/kit';
import { initOrm } from '@agent-platform/kit/db';
import { createTestDatabase } from '@agent-platform/kit/testing';
import type { Agent, UpdateAgentRequest } from '@agent-platform/proto/agents/v1/agents';
import { describe, expect, onTestFinished, test as plainTest } from 'vitest';
import { entities, migrations, openDatabase } from '../src/database.js';
import { actorOf, agentMemoryTest, eventsOf, expectError, newTenant, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

// http tools are checked against the outbound address policy at save: their host must be public.
const test = agentMemoryTest({ resolveHost: () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]) });

type Change = Partial<Pick<UpdateAgentRequest, 'name' | 'type' | 'description' | 'configJson'>> & { memoryTypes?: string[]; tools?: string[]; replace?: boolean };

/** A PATCH (or, with `replace`, a PUT) of the agent, as the gateway sends it. */
async function update(service: AgentMemoryHarness, tenant: TestTenant, agentId: string, change: Change): Promise<Agent> {
  const { memoryTypes, tools, replace, ...fields } = change;
  const request: UpdateAgentRequest = {
    agentId,
    replace: replace ?? false,
    ...fields,
    setMemoryTypes: memoryTypes !== undefined,
    memoryTypes: memoryTypes ?? [],
    setTools: tools !== undefined,
    tools: tools ?? [],
  };
  return (await service.agents.updateAgent(request, { principal: tenant.principal })).agent!;
}

async function versionsOf(service: AgentMemoryHarness, tenant: TestTenant, agentId: string, page = { page: 1, perPage: 100 }) {
  return service.agents.listAgentVersions({ agentId, page }, { principal: tenant.principal });
}

async function versionOf(service: AgentMemoryHarness, tenant: TestTenant, agentId: string, version: number) {
  return (await service.agents.getAgentVersion({ agentId, version }, { principal: tenant.principal })).version!;
}

async function httpTool(service: AgentMemoryHarness, tenant: TestTenant, name: string): Promise<string> {
  const request = { name, description: `Calls ${name}.`, type: 'http', configJson: JSON.stringify({ url: `https://api.example.com/${name}` }), inputSchemaJson: '{"type":"object"}' };
  return (await service.tools.createTool(request, { principal: tenant.principal })).tool!.id;
}

describe('agent versions (decisions §16)', () => {
  test('creation is version 1; each change of config, tools or memory_types makes the next; name, type, description or the same settings keep it', async ({ service }) => {
    const tenant = newTenant();
    const created = await service.createAgent(tenant, { configJson: '{"model":"gpt-x","temperature":0.2}' });
    expect(created.version).toBe(1);
    const lookup = await httpTool(service, tenant, 'lookup');

    expect((await update(service, tenant, created.id, { configJson: '{"model":"gpt-x","temperature":0.7}' })).version).toBe(2);
    expect((await update(service, tenant, created.id, { tools: [lookup] })).version).toBe(3);
    expect((await update(service, tenant, created.id, { memoryTypes: ['semantic', 'episodic', 'procedural'] })).version).toBe(4);
    expect((await update(service, tenant, created.id, { name: 'Renamed', description: 'For people', type: 'support' })).version).toBe(4);
    // The same settings in other words: keys reordered, types repeated and out of order, a null key (the default).
    const same = await update(service, tenant, created.id, {
      configJson: '{"temperature":0.7,"top_p":null,"model":"gpt-x"}',
      memoryTypes: ['procedural', 'semantic', 'episodic', 'semantic'],
      tools: [lookup, lookup],
    });
    expect(same.version).toBe(4);
    // A PUT resets what it leaves out: the settings change, so it makes a version.
    expect((await update(service, tenant, created.id, { replace: true, name: 'Reset', type: 'support' })).version).toBe(5);
    expect((await update(service, tenant, created.id, { replace: true, name: 'Reset again', type: 'support' })).version).toBe(5);

    const listed = await versionsOf(service, tenant, created.id);
    expect(listed.total).toBe(5);
    expect(listed.items.map((item) => item.version)).toEqual([5, 4, 3, 2, 1]);
    expect(listed.items[4]).toEqual({ version: 1, createdAt: created.createdAt, createdBy: tenant.principal.userId });
    expect((await service.agents.getAgent({ agentId: created.id }, { principal: tenant.principal })).agent).toMatchObject({ version: 5, name: 'Reset again' });
    // agent.updated carries the version the agent is at.
    const updates = await eventsOf(service.database, tenant.tenantId, 'agent.updated');
    expect(updates.map((event) => event.data.version)).toEqual([2, 3, 4, 4, 4, 5, 5]);
  });

  test('a version holds the settings it was made with, and lists page newest first', async ({ service }) => {
    const tenant = newTenant();
    const created = await service.createAgent(tenant, { configJson: '{"system_prompt":"Be brief."}', memoryTypes: ['episodic'] });
    for (const temperature of [0.1, 0.2, 0.3, 0.4]) await update(service, tenant, created.id, { configJson: JSON.stringify({ temperature }) });

    expect(await versionOf(service, tenant, created.id, 1)).toEqual({
      version: 1,
      createdAt: created.createdAt,
      createdBy: tenant.principal.userId,
      settings: { memoryTypes: ['episodic'], config: { systemPrompt: 'Be brief.' }, tools: [] },
    });
    expect((await versionOf(service, tenant, created.id, 3)).settings).toEqual({ memoryTypes: ['episodic'], config: { temperature: 0.2 }, tools: [] });

    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push(await versionsOf(service, tenant, created.id, { page, perPage: 2 }));
    expect(pages.map((page) => page.items.map((item) => item.version))).toEqual([[5, 4], [3, 2], [1], []]);
    expect(pages.every((page) => page.total === 5)).toBe(true);
    // Lists leave the settings out.
    expect(pages[0]!.items[0]!.settings).toBeUndefined();
    await expectError(versionsOf(service, tenant, created.id, { page: 1, perPage: 101 }), 'validation_error');
  });

  test('restore makes a new version equal to the one restored, even the current one, keeps the name and emits agent.updated', async ({ service }) => {
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const lookup = await httpTool(service, tenant, 'lookup');
    const created = await service.createAgent(tenant, { configJson: '{"model":"first","temperature":0.5}', memoryTypes: ['semantic'] });
    await update(service, tenant, created.id, { tools: [lookup] });
    await update(service, tenant, created.id, { name: 'Renamed', configJson: '{"model":"second"}', memoryTypes: ['episodic', 'procedural'] });

    const restored = (await service.agents.restoreAgentVersion({ agentId: created.id, version: 1 }, as)).agent!;
    expect(restored).toMatchObject({ id: created.id, name: 'Renamed', version: 4, memoryTypes: ['semantic'], config: { model: 'first', temperature: 0.5 }, tools: [] });
    expect((await versionOf(service, tenant, created.id, 4)).settings).toEqual((await versionOf(service, tenant, created.id, 1)).settings);
    expect((await service.agents.getAgent({ agentId: created.id }, as)).agent).toEqual(restored);
    expect((await eventsOf(service.database, tenant.tenantId, 'agent.updated')).at(-1)!.data).toMatchObject({ version: 4, config: { model: 'first', temperature: 0.5 } });

    expect((await service.agents.restoreAgentVersion({ agentId: created.id, version: 2 }, as)).agent).toMatchObject({ version: 5, tools: [lookup], config: { model: 'first' } });
    // decisions §13, which §16 follows: "a new version equal to that one", whatever the current settings are.
    expect((await service.agents.restoreAgentVersion({ agentId: created.id, version: 5 }, as)).agent!.version).toBe(6);
    expect((await versionsOf(service, tenant, created.id)).items.map((item) => item.version)).toEqual([6, 5, 4, 3, 2, 1]);
  });

  test('atVersion gives the agent with a past version\'s settings under its current name; the current version is the agent itself', async ({ service }) => {
    const tenant = newTenant();
    const actor = actorOf(tenant);
    const lookup = await httpTool(service, tenant, 'lookup');
    const created = await service.createAgent(tenant, { configJson: '{"model":"old","system_prompt":"Be terse."}' });
    await update(service, tenant, created.id, { name: 'Now', configJson: '{"model":"new"}', tools: [lookup], memoryTypes: ['semantic'] });

    const past = await service.agentsService.atVersion(actor, created.id, 1);
    expect(past).toMatchObject({ id: created.id, name: 'Now', version: 1, config: { model: 'old', system_prompt: 'Be terse.' }, tools: [], memoryTypes: ['semantic', 'episodic'] });
    const current = await service.agentsService.atVersion(actor, created.id, 2);
    expect(current).toEqual(await service.agentsService.get(actor, created.id));
    expect(current).toMatchObject({ version: 2, config: { model: 'new' }, tools: [lookup], memoryTypes: ['semantic'] });

    expect((await expectError(service.agentsService.atVersion(actor, created.id, 3), 'not_found')).message).toBe('Agent version not found.');
    await expectError(service.agentsService.atVersion(actor, created.id, 0), 'validation_error');
    await expectError(service.agentsService.atVersion(actorOf(newTenant()), created.id, 1), 'not_found');
  });

  test("an unknown version, or another tenant's agent, is not_found; version 0 is no version; a viewer reads but cannot restore", async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const as = { principal: tenant.principal };
    const created = await service.createAgent(tenant);
    const missing = await expectError(service.agents.getAgentVersion({ agentId: created.id, version: 2 }, as), 'not_found');
    expect(missing.message).toBe('Agent version not found.');
    await expectError(service.agents.restoreAgentVersion({ agentId: created.id, version: 7 }, as), 'not_found');
    const zero = await expectError(service.agents.getAgentVersion({ agentId: created.id, version: 0 }, as), 'validation_error');
    expect(zero.details).toEqual([{ field: 'version', message: 'must be an integer of at least 1' }]);

    const foreign = { principal: stranger.principal };
    for (const error of [
      await expectError(versionsOf(service, stranger, created.id), 'not_found'),
      await expectError(service.agents.getAgentVersion({ agentId: created.id, version: 1 }, foreign), 'not_found'),
      await expectError(service.agents.restoreAgentVersion({ agentId: created.id, version: 1 }, foreign), 'not_found'),
    ]) {
      expect(error.message).toBe('Agent not found.');
    }

    const viewer = { principal: { ...tenant.principal, role: 'viewer' } };
    expect((await service.agents.listAgentVersions({ agentId: created.id, page: undefined }, viewer)).total).toBe(1);
    await expectError(service.agents.restoreAgentVersion({ agentId: created.id, version: 1 }, viewer), 'forbidden');
    expect((await service.agents.getAgent({ agentId: created.id }, as)).agent!.version).toBe(1);
  });

  test('deleting a tool makes the next version of each agent that named it; restoring a version that names it is refused', async ({ service }) => {
    const tenant = newTenant();
    const [lookup, refund] = [await httpTool(service, tenant, 'lookup'), await httpTool(service, tenant, 'refund')];
    const named = await service.createAgent(tenant);
    await update(service, tenant, named.id, { tools: [lookup, refund] });
    const other = await service.createAgent(tenant, { name: 'Without tools' });

    await service.tools.deleteTool({ toolId: lookup }, { principal: tenant.principal });
    expect((await service.agents.getAgent({ agentId: named.id }, { principal: tenant.principal })).agent).toMatchObject({ version: 3, tools: [refund] });
    expect(await versionOf(service, tenant, named.id, 3)).toMatchObject({ createdBy: tenant.principal.userId, settings: { tools: [refund] } });
    // The version that named it is kept as it was.
    expect((await versionOf(service, tenant, named.id, 2)).settings!.tools).toEqual([lookup, refund]);
    expect((await service.agents.getAgent({ agentId: other.id }, { principal: tenant.principal })).agent!.version).toBe(1);

    const refused = await expectError(service.agents.restoreAgentVersion({ agentId: named.id, version: 2 }, { principal: tenant.principal }), 'validation_error');
    expect(refused.details).toEqual([{ field: 'tools[0]', message: 'is not a tool of this tenant' }]);
    expect((await versionsOf(service, tenant, named.id)).total).toBe(3);
  });

  test('concurrent updates take consecutive versions, none lost and none twice', async ({ service }) => {
    const tenant = newTenant();
    const created = await service.createAgent(tenant);
    const saved = await Promise.all(Array.from({ length: 10 }, (_, index) => update(service, tenant, created.id, { configJson: JSON.stringify({ max_tokens: index + 1 }) })));
    expect(saved.map((agent) => agent.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    // Each answer's settings are the version it names.
    for (const agent of saved) expect((await versionOf(service, tenant, created.id, agent.version)).settings!.config).toEqual(agent.config);
  });

  test('deleting an agent deletes its versions', async ({ service }) => {
    const tenant = newTenant();
    const created = await service.createAgent(tenant);
    await update(service, tenant, created.id, { configJson: '{"temperature":1}' });
    const count = async () => (await service.database.query<{ n: number }>(`select count(*)::int as n from agent_versions where agent_id = $1`, [created.id]))[0]!.n;
    expect(await count()).toBe(2);
    await service.agents.deleteAgent({ agentId: created.id }, { principal: tenant.principal });
    expect(await count()).toBe(0);
    await expectError(versionsOf(service, tenant, created.id), 'not_found');
  });
});

plainTest('0012 makes each existing agent version 1 of its current settings', async () => {
  const logger = createLogger({ service: 'migration-test', level: 'silent' });
  const beforeVersions = migrations.slice(0, migrations.findIndex((migration) => migration.name === '0012_agent_versions'));
  // A database as released before versions, with an agent in it, then brought up to date.
  const database = await createTestDatabase({
    name: 'agents_pre_versions',
    migrations: beforeVersions,
    migrate: async (url) => {
      const orm = await initOrm({ clientUrl: url, entities, migrations: beforeVersions, logger });
      await orm.close();
    },
  });
  onTestFinished(() => database.drop());
  await database.query(
    `insert into agents (id, tenant_id, name, type, description, memory_types, config, status, tools, created_at, updated_at)
     values ('agt_old', 'tnt_old', 'Old', 'support', null, '{semantic}', '{"model":"m"}', 'active', '{tool_a}', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z')`,
  );

  const orm = await openDatabase(database.url, logger);
  await orm.close();

  expect(await database.query(`select version from agents`)).toEqual([{ version: 1 }]);
  expect(await database.query(`select agent_id, version, tenant_id, memory_types, config, tools, created_at, created_by from agent_versions`)).toEqual([
    { agent_id: 'agt_old', version: 1, tenant_id: 'tnt_old', memory_types: ['semantic'], config: { model: 'm' }, tools: ['tool_a'], created_at: new Date('2026-02-01T00:00:00Z'), created_by: null },
  ]);
  // No default was left behind: a new agent must say its version.
  expect(await database.query(`select column_default from information_schema.columns where table_name = 'agents' and column_name = 'version'`)).toEqual([{ column_default: null }]);
});
