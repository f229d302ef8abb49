/**
 * The agent reads of memory search (RecentAgents) on the real database: a read is kept for its
 * TTL and shared by concurrent misses, a missing agent is never kept, and forget() drops a kept
 * read and one in flight. Through the service: a change or deletion made through this process is
 * seen by the next search at once, one made through another replica within the TTL.
 */
import { describe, expect, onTestFinished } from 'vitest';
import { AgentsRepository } from '../src/agents/agents.repository.js';
import { RECENT_AGENT_TTL_MS, RecentAgents } from '../src/agents/recent-agents.js';
import { openDatabase } from '../src/database.js';
import { agentMemoryTest, expectError, logger, newTenant, startAgentMemory, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

const test = agentMemoryTest();
const TTL_MS = 1_000;

/** RecentAgents over a real repository, on a clock the test moves, counting the statements it runs. */
async function recentAgentsOn(service: AgentMemoryHarness) {
  const orm = await openDatabase(service.database.url, logger);
  onTestFinished(() => orm.close());
  const repository = new AgentsRepository(orm.em.fork());
  const clock = { now: 1_000 };
  const counted = { statements: 0 };
  const recent = new RecentAgents(
    {
      find: (tenantId, agentId) => {
        counted.statements += 1;
        return repository.find(tenantId, agentId);
      },
    },
    { ttlMs: TTL_MS, now: () => clock.now },
  );
  return { recent, clock, counted };
}

/** Sets the agent's memory types behind the service's back, as another replica's change would land. */
async function setMemoryTypesInDatabase(service: AgentMemoryHarness, agentId: string, memoryTypes: string[]): Promise<void> {
  await service.database.query(`update "agents" set "memory_types" = $1 where "id" = $2`, [memoryTypes, agentId]);
}

describe('RecentAgents', () => {
  test('keeps a read for its TTL and shares one statement among concurrent misses', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const { recent, clock, counted } = await recentAgentsOn(service);

    const reads = await Promise.all([1, 2, 3].map(() => recent.find(tenant.tenantId, agent.id)));
    expect(reads.map((read) => read?.memoryTypes)).toEqual([['semantic'], ['semantic'], ['semantic']]);
    expect(counted.statements).toBe(1);

    await setMemoryTypesInDatabase(service, agent.id, ['semantic', 'episodic']);
    clock.now += TTL_MS;
    expect((await recent.find(tenant.tenantId, agent.id))?.memoryTypes).toEqual(['semantic']);
    clock.now += 1;
    expect((await recent.find(tenant.tenantId, agent.id))?.memoryTypes).toEqual(['semantic', 'episodic']);
    expect(counted.statements).toBe(2);
  });

  test('never keeps a missing agent, nor shows one tenant another tenant’s', async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const agent = await service.createAgent(tenant);
    const { recent, counted } = await recentAgentsOn(service);
    expect(await recent.find(tenant.tenantId, agent.id)).not.toBeNull();
    expect(await recent.find(stranger.tenantId, agent.id)).toBeNull();
    expect(await recent.find(stranger.tenantId, agent.id)).toBeNull();
    expect(counted.statements).toBe(3);
  });

  test('forget() drops a kept read, and a read in flight is not kept', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const { recent, counted } = await recentAgentsOn(service);

    await recent.find(tenant.tenantId, agent.id);
    await setMemoryTypesInDatabase(service, agent.id, ['episodic']);
    recent.forget(tenant.tenantId, agent.id);
    expect((await recent.find(tenant.tenantId, agent.id))?.memoryTypes).toEqual(['episodic']);
    expect(counted.statements).toBe(2);

    // Forgotten while its statement runs: what it read may predate the change, so the next find reads again.
    recent.forget(tenant.tenantId, agent.id);
    const inFlight = recent.find(tenant.tenantId, agent.id);
    recent.forget(tenant.tenantId, agent.id);
    await inFlight;
    await recent.find(tenant.tenantId, agent.id);
    expect(counted.statements).toBe(4);
  });
});

describe('SearchMemory and the agent it reads', () => {
  const searchTyped = (service: AgentMemoryHarness, tenant: TestTenant, agentId: string, memoryType?: string) =>
    service.memory.searchMemory({ agentId, query: 'anything', topK: 5, ...(memoryType ? { memoryType } : {}) }, { principal: tenant.principal });

  test('sees a change or deletion made through this process at once', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    await expectError(searchTyped(service, tenant, agent.id, 'episodic'), 'validation_error');

    const update = { agentId: agent.id, replace: false, setMemoryTypes: true, memoryTypes: ['semantic', 'episodic'], setTools: false, tools: [] };
    await service.agents.updateAgent(update, { principal: tenant.principal });
    expect((await searchTyped(service, tenant, agent.id, 'episodic')).results).toEqual([]);

    await service.agents.deleteAgent({ agentId: agent.id }, { principal: tenant.principal });
    await expectError(searchTyped(service, tenant, agent.id), 'not_found');
  });

  test('sees a change made through another replica within the TTL', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const replica = await startAgentMemory(service.database);
    onTestFinished(() => replica.stop());
    await expectError(searchTyped(replica, tenant, agent.id, 'episodic'), 'validation_error');

    const update = { agentId: agent.id, replace: false, setMemoryTypes: true, memoryTypes: ['episodic'], setTools: false, tools: [] };
    await service.agents.updateAgent(update, { principal: tenant.principal });
    const accepted = () => searchTyped(replica, tenant, agent.id, 'episodic').then(() => true, () => false);
    await expect.poll(accepted, { timeout: RECENT_AGENT_TTL_MS + 5_000, interval: 50 }).toBe(true);
  });
});
