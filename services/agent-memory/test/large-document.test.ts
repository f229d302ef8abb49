/**
 * The largest document a tenant may upload (DOCUMENT_MAX_BYTES, 20 MiB) while the agent's memory
 * is searched: reading it runs on a thread of its own, embedding yields between slices and its
 * 26,666 chunks are written a batch per statement, so each search answers within the deadline
 * the gateway gives it (5 s). Before, one statement of all its chunks held the service's thread
 * for seconds and searches failed with DEADLINE_EXCEEDED.
 */
import { expect } from 'vitest';
import { tenantCall, uploadOf } from './support/documents.js';
import { agentMemoryTest, newTenant } from './support/harness.js';

const test = agentMemoryTest();
const MIB = 1_048_576;

test('a 20 MiB text is read, embedded and stored while every search answers within its deadline', { timeout: 240_000 }, async ({ service }) => {
  const tenant = newTenant();
  const call = tenantCall(tenant);
  const agent = await service.createAgent(tenant);
  await service.memory.addMemory({ agentId: agent.id, content: 'Refunds take thirty days from delivery.', memoryType: 'semantic' }, call);
  // One paragraph of 20 MiB: no blank line to cut it at.
  const text = Buffer.alloc(20 * MIB - 64 * 1024, 'Refunds are accepted within 30 days of delivery.\n');
  const { document } = await service.documents.uploadDocument(uploadOf(text, { agentId: agent.id, filename: 'large.txt', contentType: 'text/plain' }), call);

  let searches = 0;
  let status = document!.status;
  while (status === 'processing') {
    // The default deadline of every call the gateway makes (GRPC_DEADLINE_MS): a search that waits longer fails.
    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'how long do refunds take', topK: 3 }, { ...call, deadlineMs: 5_000 });
    expect(results.length).toBeGreaterThan(0);
    searches += 1;
    status = (await service.documents.getDocument({ documentId: document!.id }, call)).document!.status;
  }

  const { document: ready } = await service.documents.getDocument({ documentId: document!.id }, call);
  expect(ready).toMatchObject({ status: 'ready', chunks: 26_666 });
  // The document took seconds: searches were answered all along, not only before and after.
  expect(searches).toBeGreaterThan(10);
});
