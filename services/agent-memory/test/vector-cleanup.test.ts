import { expect } from 'vitest';
import { HashingEmbedder } from '../src/models/hashing-embedder.js';
import { EmbeddedVectorStore } from '../src/vectors/embedded-vector-store.js';
import { agentMemoryTest, newTenant } from './support/harness.js';

// The index itself, inspected: deletions must reach it, not only the database that search re-checks.
const embedder = new HashingEmbedder();
const vectors = new EmbeddedVectorStore({ directory: undefined, dimensions: embedder.dimensions, model: embedder.model });
const test = agentMemoryTest({ embedder, vectors });

async function indexed(tenantId: string, agentId: string): Promise<string[]> {
  const [query] = await embedder.embed(['anything']);
  return (await vectors.search({ tenantId, agentId, vector: query!, limit: 100 })).map((hit) => hit.id).sort();
}

test('deleting a memory item, a document or the agent removes their vectors from the index', async ({ service }) => {
  const tenant = newTenant();
  const call = { principal: tenant.principal };
  const agent = await service.createAgent(tenant);
  const { item: kept } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'kept fact' }, call);
  const { item: dropped } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'dropped fact' }, call);
  const { document } = await service.documents.addTextDocument({ agentId: agent.id, content: 'A paragraph. '.repeat(200) }, call);
  expect((await indexed(tenant.tenantId, agent.id)).length).toBe(2 + document!.chunks);

  await service.memory.deleteMemory({ memoryId: dropped!.id }, call);
  await service.documents.deleteDocument({ documentId: document!.id }, call);
  expect(await indexed(tenant.tenantId, agent.id)).toEqual([kept!.id]);

  await service.agents.deleteAgent({ agentId: agent.id }, call);
  expect(await indexed(tenant.tenantId, agent.id)).toEqual([]);
});
