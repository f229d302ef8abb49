import type { Principal } from '@agent-platform/kit/grpc';
import type { TestDatabase } from '@agent-platform/kit/testing';
import { describe, expect } from 'vitest';
import type { Embedder } from '../src/models/embedder.js';
import { HASHING_MODEL, HashingEmbedder } from '../src/models/hashing-embedder.js';
import { HYBRID_MODEL, HybridEmbedder } from '../src/models/hybrid-embedder.js';
import { EmbeddedVectorStore } from '../src/vectors/embedded-vector-store.js';
import { FollowingVectorStore } from '../src/vectors/following-vector-store.js';
import { DOCUMENT_TITLE, sampleMarkdown } from './fixtures/documents.js';
import { PARAPHRASE_ITEMS } from './fixtures/paraphrase.js';
import { settled, uploadOf } from './support/documents.js';
import { logger, newTenant, ownDatabaseTest as test, startAgentMemory, type AgentMemoryHarness } from './support/harness.js';

// Issue 43: memory stored under the `hashing` embedder, then a service started with the hybrid one
// (the default): the items are re-embedded in the background, found by their words meanwhile and
// by meaning after, on every replica.

/** An embedder (the hybrid one by default), recording every text it is asked to embed. */
class RecordingEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly supersedes: readonly string[] | undefined;
  readonly texts: string[] = [];

  constructor(private readonly inner: Embedder = new HybridEmbedder()) {
    this.model = inner.model;
    this.dimensions = inner.dimensions;
    this.supersedes = inner.supersedes;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return this.inner.embed(texts, signal);
  }
}

/** An agent whose items the hashing embedder stored, through a service stopped since. */
async function storedUnderHashing(database: TestDatabase, contents: readonly string[]) {
  const old = await startAgentMemory(database, { embedder: new HashingEmbedder() });
  try {
    const tenant = newTenant();
    const agent = await old.createAgent(tenant, { memoryTypes: ['semantic'] });
    const call = { principal: tenant.principal };
    const ids: string[] = [];
    for (const content of contents) ids.push((await old.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content }, call)).item!.id);
    return { tenant, agent, call, ids };
  } finally {
    await old.stop();
  }
}

async function modelsOf(database: TestDatabase, agentId: string): Promise<Record<string, number>> {
  const rows = await database.query<{ embedding_model: string; count: string }>(
    `select "embedding_model", count(*) as "count" from "memory_items" where "agent_id" = $1 group by 1`,
    [agentId],
  );
  return Object.fromEntries(rows.map((row) => [row.embedding_model, Number(row.count)]));
}

/**
 * Holds every item of the agent locked, as another replica's batch would: the services skip them
 * until `release`. On the database's own connection, which the test then leaves alone until released.
 */
async function lockItems(database: TestDatabase, agentId: string): Promise<{ release: () => Promise<void> }> {
  await database.query('begin');
  await database.query(`select "id" from "memory_items" where "agent_id" = $1 for update`, [agentId]);
  return { release: async () => void (await database.query('commit')) };
}

async function untilReembedded(database: TestDatabase, agentId: string, items: number): Promise<void> {
  await expect.poll(() => modelsOf(database, agentId), { timeout: 20_000, interval: 50 }).toEqual({ [HYBRID_MODEL]: items });
}

async function keysFound(service: AgentMemoryHarness, call: { principal: Principal }, agentId: string, query: string, keyOf: ReadonlyMap<string, string>) {
  const { results } = await service.memory.searchMemory({ agentId, query, topK: 5 }, call);
  return results.map((result) => ({ key: keyOf.get(result.item!.id), score: result.score }));
}

describe('re-embedding after the embedder changed', () => {
  test('items stored under hashing are found by their words meanwhile, then by meaning, with no history written', async ({ database, onTestFinished }) => {
    const { agent, call, ids } = await storedUnderHashing(database, PARAPHRASE_ITEMS.map((item) => item.content));
    const keyOf = new Map(ids.map((id, index) => [id, PARAPHRASE_ITEMS[index]!.key]));
    const lock = await lockItems(database, agent.id);
    const service = await startAgentMemory(database);
    onTestFinished(() => service.stop());

    // Nothing can be re-embedded while the items are held: search answers from their words.
    const porto = await keysFound(service, call, agent.id, 'Porto', keyOf);
    expect(porto[0]?.key).toBe('moved');
    const allergy = await keysFound(service, call, agent.id, 'is anyone allergic to peanuts?', keyOf);
    expect(allergy[0]?.key).toBe('allergy');
    // A question that shares no word with its answer waits for the new vectors.
    expect((await keysFound(service, call, agent.id, 'Where did I move?', keyOf)).map((found) => found.key)).not.toContain('moved');
    expect(await modelsOf(database, agent.id)).toEqual({ [HASHING_MODEL]: PARAPHRASE_ITEMS.length });

    await lock.release();
    await untilReembedded(database, agent.id, PARAPHRASE_ITEMS.length);
    expect((await keysFound(service, call, agent.id, 'Where did I move?', keyOf))[0]?.key).toBe('moved');
    expect((await keysFound(service, call, agent.id, 'Does my child have a food intolerance?', keyOf)).map((found) => found.key)).toContain('allergy');
    // Found by its words, it was scored as it is now that it is re-embedded.
    const portoAfter = (await keysFound(service, call, agent.id, 'Porto', keyOf))[0];
    expect(portoAfter?.key).toBe('moved');
    expect(portoAfter?.score).toBeCloseTo(porto[0]!.score, 5);

    const history = await database.query<{ event: string; count: string }>(`select "event", count(*) as "count" from "memory_history" where "memory_id" = any($1) group by 1`, [ids]);
    expect(history).toEqual([{ event: 'ADD', count: String(ids.length) }]);
    const unmarked = await database.query<{ count: string }>(`select count(*) as "count" from "memory_items" where "id" = any($1) and "embedded_xact" is null`, [ids]);
    expect(unmarked).toEqual([{ count: '0' }]);
  });

  test('a document chunk is re-embedded from the text it was first embedded from: its heading path, then its body', async ({ database, onTestFinished }) => {
    const first = new RecordingEmbedder(new HashingEmbedder());
    const old = await startAgentMemory(database, { embedder: first });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    let agentId: string;
    try {
      const agent = await old.createAgent(tenant, { memoryTypes: ['semantic'] });
      agentId = agent.id;
      const { document } = await old.documents.uploadDocument(uploadOf(sampleMarkdown(), { agentId, filename: 'returns.md', contentType: 'text/markdown' }), call);
      expect((await settled(old.documents, call, document!.id)).status).toBe('ready');
    } finally {
      await old.stop();
    }
    expect(first.texts.filter((text) => text.startsWith(`${DOCUMENT_TITLE} › Refund window\n\nRefunds are accepted`))).toHaveLength(1);

    const again = new RecordingEmbedder();
    const service = await startAgentMemory(database, { embedder: again });
    onTestFinished(() => service.stop());
    await untilReembedded(database, agentId, first.texts.length);
    expect([...again.texts].sort()).toEqual([...first.texts].sort());
  });

  test('replicas share the items without embedding one twice, and each index learns of the others\' through the feed', async ({ database, onTestFinished }) => {
    const contents = Array.from({ length: 450 }, (_, index) => `Note ${index}: the parcel for customer ${index} left the warehouse in Porto on day ${index % 30}.`);
    const { tenant, agent, ids } = await storedUnderHashing(database, contents);
    const lock = await lockItems(database, agent.id);
    const replicas = [0, 1].map(() => ({
      embedder: new RecordingEmbedder(),
      index: new FollowingVectorStore(new EmbeddedVectorStore({ directory: undefined, dimensions: new HybridEmbedder().dimensions, model: HYBRID_MODEL }), { logger }),
    }));
    const services = await Promise.all(replicas.map((replica) => startAgentMemory(database, { embedder: replica.embedder, vectors: replica.index })));
    onTestFinished(() => Promise.all(services.map((service) => service.stop())).then(() => undefined));
    const [probe] = await new HybridEmbedder().embed(['parcel']);
    const indexed = async (index: FollowingVectorStore) => (await index.similarities({ tenantId: tenant.tenantId, agentId: agent.id, vector: probe!, ids })).length;
    // Both opened their index before anything was re-embedded: whatever they hold later came after.
    expect(await Promise.all(replicas.map((replica) => indexed(replica.index)))).toEqual([0, 0]);

    await lock.release();
    await untilReembedded(database, agent.id, contents.length);
    const [first, second] = replicas.map((replica) => replica.embedder.texts.filter((text) => contents.includes(text)));
    expect(first!.filter((text) => second!.includes(text))).toEqual([]);
    expect(first!.length + second!.length).toBe(contents.length);
    // Each replica's own index holds every item: those the other re-embedded came through the feed.
    expect(await Promise.all(replicas.map((replica) => indexed(replica.index)))).toEqual([contents.length, contents.length]);
  });
});
