import { describe, expect } from 'vitest';
import { agentMemoryTest, expectError, newTenant } from './support/harness.js';

const test = agentMemoryTest();

describe('AddMemory and ListMemory', () => {
  test('stores an item of one of the agent memory types and lists newest first', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Likes tea', metadataJson: '{"topic":"drinks"}' }, call);
    expect(item).toMatchObject({ agentId: agent.id, memoryType: 'semantic', content: 'Likes tea' });
    expect(JSON.parse(item!.metadataJson)).toEqual({ topic: 'drinks' });
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'episodic', content: 'Called on Monday' }, call);
    const listed = await service.memory.listMemory({ agentId: agent.id, page: undefined }, call);
    expect(listed.items.map((listedItem) => listedItem.content)).toEqual(['Called on Monday', 'Likes tea']);
    const semantic = await service.memory.listMemory({ agentId: agent.id, memoryType: 'semantic', page: undefined }, call);
    expect(semantic.total).toBe(1);
  });

  test('names bad fields: a type the agent does not keep, blank or too long content, metadata not an object', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const wrongType = await expectError(service.memory.addMemory({ agentId: agent.id, memoryType: 'episodic', content: 'x' }, call), 'validation_error');
    expect(wrongType.details.map((detail) => detail.field)).toEqual(['memory_type']);
    const bad = await expectError(service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'y'.repeat(32_001), metadataJson: '[1]' }, call), 'validation_error');
    expect(bad.details.map((detail) => detail.field).sort()).toEqual(['content', 'metadata']);
    await expectError(service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: '   ' }, call), 'validation_error');
  });

  test("another tenant's agent and items are not_found", async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const agent = await service.createAgent(tenant);
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'secret plan' }, { principal: tenant.principal });
    const foreign = { principal: stranger.principal };
    await expectError(service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'x' }, foreign), 'not_found');
    await expectError(service.memory.searchMemory({ agentId: agent.id, query: 'plan', topK: 5 }, foreign), 'not_found');
    await expectError(service.memory.listMemory({ agentId: agent.id, page: undefined }, foreign), 'not_found');
    await expectError(service.memory.deleteMemory({ memoryId: item!.id }, foreign), 'not_found');
    expect((await service.memory.listMemory({ agentId: agent.id, page: undefined }, { principal: tenant.principal })).total).toBe(1);
  });
});

describe('SearchMemory', () => {
  test('finds the exact id first, scores in [0, 1] best first, and honours top_k, min_score, memory_type and filter', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const add = (content: string, memoryType = 'semantic', metadata: object = {}) =>
      service.memory.addMemory({ agentId: agent.id, memoryType, content, metadataJson: JSON.stringify(metadata) }, call);
    await add('Order ord_4821 was shipped to Lisbon on 3 May.', 'semantic', { kind: 'order', vip: true });
    await add('Order ord_9377 is waiting for payment.', 'semantic', { kind: 'order', vip: false });
    await add('The customer prefers to be contacted by e-mail.', 'semantic', { kind: 'preference' });
    await add('Asked about shipping times last week.', 'episodic', { kind: 'call' });

    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'where is ord_4821?', topK: 10 }, call);
    expect(results[0]!.item!.content).toContain('ord_4821');
    for (const result of results) expect(result.score).toBeGreaterThanOrEqual(0);
    for (const result of results) expect(result.score).toBeLessThanOrEqual(1);
    expect(results.map((result) => result.score)).toEqual([...results.map((result) => result.score)].sort((a, b) => b - a));

    expect((await service.memory.searchMemory({ agentId: agent.id, query: 'order', topK: 1 }, call)).results).toHaveLength(1);
    const strict = await service.memory.searchMemory({ agentId: agent.id, query: 'where is ord_4821?', topK: 10, minScore: results[0]!.score }, call);
    expect(strict.results.map((result) => result.item!.content)).toEqual([results[0]!.item!.content]);
    const episodic = await service.memory.searchMemory({ agentId: agent.id, query: 'shipping', topK: 10, memoryType: 'episodic' }, call);
    expect(episodic.results.map((result) => result.item!.memoryType)).toEqual(['episodic']);
    const filtered = await service.memory.searchMemory({ agentId: agent.id, query: 'order', topK: 10, filterJson: '{"kind":"order","vip":false}' }, call);
    expect(filtered.results.map((result) => result.item!.content)).toEqual(['Order ord_9377 is waiting for payment.']);
  });

  test('names bad search fields', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const error = await expectError(
      service.memory.searchMemory({ agentId: agent.id, query: '', topK: 101, minScore: 1.5, memoryType: 'episodic', filterJson: '{"a":{"b":1}}' }, call),
      'validation_error',
    );
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['filter.a', 'memory_type', 'min_score', 'query', 'top_k']);
  });

  test('a deleted item no longer comes back', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The vault code is 7788.' }, call);
    expect((await service.memory.searchMemory({ agentId: agent.id, query: 'vault code', topK: 5 }, call)).results).toHaveLength(1);
    await service.memory.deleteMemory({ memoryId: item!.id }, call);
    expect((await service.memory.searchMemory({ agentId: agent.id, query: 'vault code', topK: 5 }, call)).results).toEqual([]);
    await expectError(service.memory.deleteMemory({ memoryId: item!.id }, call), 'not_found');
  });
});

describe('Documents', () => {
  test('chunks with overlap into semantic items carrying metadata.document_id; deleting the document removes them from search', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const paragraphs = Array.from({ length: 12 }, (_, index) => `Section ${index}. ${'Refunds are processed within five working days. '.repeat(4)}`);
    paragraphs[7] = 'Section 7. The warehouse in Porto closes at 18:00 on Fridays and the code word is heliotrope.';
    const { document } = await service.documents.addTextDocument({ agentId: agent.id, title: 'Handbook', content: paragraphs.join('\n\n'), metadataJson: '{"source":"wiki"}' }, call);
    expect(document!.chunks).toBeGreaterThan(1);
    expect(document!.id).toMatch(/^doc_/);
    const chunks = await service.memory.listMemory({ agentId: agent.id, page: { page: 1, perPage: 100 } }, call);
    expect(chunks.total).toBe(document!.chunks);
    for (const chunk of chunks.items) expect(JSON.parse(chunk.metadataJson)).toMatchObject({ document_id: document!.id, source: 'wiki', title: 'Handbook' });

    const found = await service.memory.searchMemory({ agentId: agent.id, query: 'heliotrope', topK: 3 }, call);
    expect(found.results[0]!.item!.content).toContain('heliotrope');

    await service.documents.deleteDocument({ documentId: document!.id }, call);
    expect((await service.memory.searchMemory({ agentId: agent.id, query: 'heliotrope', topK: 3 }, call)).results).toEqual([]);
    expect((await service.memory.listMemory({ agentId: agent.id, page: undefined }, call)).total).toBe(0);
    await expectError(service.documents.deleteDocument({ documentId: document!.id }, call), 'not_found');
  });

  test('refuses a document for an agent without semantic memory', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { memoryTypes: ['episodic'] });
    const error = await expectError(service.documents.addTextDocument({ agentId: agent.id, content: 'text' }, { principal: tenant.principal }), 'validation_error');
    expect(error.details.map((detail) => detail.field)).toEqual(['agent_id']);
  });
});
