import { startReceiver, type Answer, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { embeddedText } from '../src/memory/embedded-text.js';
import { toBytes } from '../src/memory/memory-items.js';
import { HybridEmbedder } from '../src/models/hybrid-embedder.js';
import { allChunks, settled, tenantCall, uploadOf } from './support/documents.js';
import { agentMemoryTest, newTenant, type AgentMemoryHarness } from './support/harness.js';

// A section is asked about in its heading's words, which its body seldom repeats: a chunk is
// embedded and matched under its heading path, while its content stays the body.

// Pages are served from 127.0.0.1, which the platform refuses unless told it may reach private networks.
const test = agentMemoryTest({ env: { ALLOW_PRIVATE_NETWORK_URLS: 'true' } });

const REFUND_BODY = 'Money goes back to the original card within five working days.';

/** No body says "refund"; another says "policy", which would win without the headings. */
const POLICIES = `# Store policies

## Refund policy

${REFUND_BODY}

## Exchanges

Our exchange policy: swap an item for another size in any shop.

## Delivery

Parcels leave the warehouse every weekday morning.
`;

/**
 * Each chunk of the document as stored, against what its embedded text gives: the words of its
 * full-text column and those PostgreSQL finds in the text, its vector and the built-in embedder's.
 */
async function storedAgainstEmbeddedText(service: AgentMemoryHarness, documentId: string) {
  const rows = await service.database.query<{ id: string; document_id: string; content: string; metadata: Record<string, unknown>; embedding: Buffer; words: string[] }>(
    `select "id", "document_id", "content", "metadata", "embedding", tsvector_to_array("search_vector") as "words" from "memory_items" where "document_id" = $1`,
    [documentId],
  );
  const embedder = new HybridEmbedder();
  const chunks = [];
  // One by one: the harness's database is one connection.
  for (const row of rows) {
    const text = embeddedText({ documentId: row.document_id, content: row.content, metadata: row.metadata });
    const [parsed] = await service.database.query<{ words: string[] }>(`select tsvector_to_array(to_tsvector('simple', $1)) as "words"`, [text]);
    const [vector] = await embedder.embed([text]);
    chunks.push({ id: row.id, text, words: row.words, textWords: parsed!.words, embedding: row.embedding, textEmbedding: toBytes(vector!) });
  }
  return chunks;
}

describe('heading paths in what is embedded and matched', () => {
  test("a section is found by its heading's words, which its body never says; what is stored, listed and found is the body", async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.uploadDocument(uploadOf(POLICIES, { agentId: agent.id, filename: 'policies.md', contentType: 'text/markdown' }), call);
    expect((await settled(service.documents, call, document!.id)).status).toBe('ready');
    const refund = (await allChunks(service, call, document!.id)).find((chunk) => chunk.heading.includes('Refund policy'));
    expect(refund).toMatchObject({ text: REFUND_BODY, heading: ['Store policies', 'Refund policy'] });

    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'refund policy', topK: 3 }, call);
    expect(results[0]?.item).toMatchObject({ id: refund!.id, content: REFUND_BODY });

    for (const chunk of await storedAgainstEmbeddedText(service, document!.id)) {
      expect(chunk.text).toMatch(/^Store policies › .+\n\n/);
      expect(chunk.words, chunk.text).toEqual(chunk.textWords);
      expect(chunk.embedding.equals(chunk.textEmbedding), chunk.text).toBe(true);
    }
  });

  test('a chunk whose heading path the memory API changes is embedded again under the new one', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.uploadDocument(uploadOf(POLICIES, { agentId: agent.id, filename: 'policies.md', contentType: 'text/markdown' }), call);
    await settled(service.documents, call, document!.id);
    const refund = (await storedAgainstEmbeddedText(service, document!.id)).find((chunk) => chunk.text.includes(REFUND_BODY))!;
    const [row] = await service.database.query<{ metadata: Record<string, unknown> }>(`select "metadata" from "memory_items" where "id" = $1`, [refund.id]);
    const metadata = { ...row!.metadata, heading: ['Money back'] };
    await service.memory.updateMemory({ memoryId: refund.id, metadataJson: JSON.stringify(metadata) }, call);
    const changed = (await storedAgainstEmbeddedText(service, document!.id)).find((chunk) => chunk.id === refund.id)!;
    expect(changed.text).toBe(`Money back\n\n${REFUND_BODY}`);
    expect(changed.embedding.equals(changed.textEmbedding)).toBe(true);
  });

  describe('a page refreshed', () => {
    let pages: Receiver;
    let heading = 'Returns';
    beforeAll(async () => {
      pages = await startReceiver((): Answer => ({
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: `<html><head><title>Help</title></head><body><main><h1>${heading}</h1><p>${REFUND_BODY}</p></main></body></html>`,
      }));
    });
    afterAll(() => pages.close());

    test('whose heading alone changed has the chunk under it embedded again, its text the same', async ({ service }) => {
      const tenant = newTenant();
      const call = tenantCall(tenant);
      const agent = await service.createAgent(tenant);
      heading = 'Returns';
      const { document } = await service.documents.addPageDocument({ agentId: agent.id, url: pages.url('/help'), refreshSeconds: 3_600 }, call);
      await settled(service.documents, call, document!.id);
      const [before] = await storedAgainstEmbeddedText(service, document!.id);
      expect(before?.text).toBe(`Returns\n\n${REFUND_BODY}`);

      heading = 'Refund policy';
      await service.documents.refreshDocument({ documentId: document!.id }, call);
      await settled(service.documents, call, document!.id);
      const [after] = await storedAgainstEmbeddedText(service, document!.id);
      expect(after).toMatchObject({ id: before!.id, text: `Refund policy\n\n${REFUND_BODY}` });
      expect(after!.embedding.equals(after!.textEmbedding)).toBe(true);
      expect(after!.embedding.equals(before!.embedding)).toBe(false);
      const history = (await service.memory.getMemoryHistory({ memoryId: before!.id }, call)).entries;
      expect(history.map((entry) => [entry.event, entry.oldContent ?? null, entry.newContent])).toEqual([
        ['ADD', null, REFUND_BODY],
        ['UPDATE', REFUND_BODY, REFUND_BODY],
      ]);
    });
  });
});
