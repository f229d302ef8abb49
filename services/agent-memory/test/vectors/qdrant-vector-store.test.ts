/**
 * What the Qdrant adapter sends, checked without a Qdrant server: a local HTTP server answers
 * the few endpoints it calls with fixed replies and records every request. It decides nothing
 * (no search, no filtering), so it cannot drift from Qdrant's rules; the contract suite checks
 * behaviour against a real server when QDRANT_URL is set. Point ids are compared with Python's
 * uuid.uuid5 under the adapter's namespace.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { collectionName, pointId, QdrantVectorStore } from '../../src/vectors/qdrant-vector-store.js';
import { FakeDatabase, mix, newOwner, record, userRecord } from './vector-fixtures.js';

const DIMENSIONS = 4;

interface Recorded {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server answering like Qdrant for the endpoints the adapter uses; `answer: false` never answers. */
async function recordingQdrant(answer = true): Promise<{ url: string; requests: Recorded[] }> {
  const requests: Recorded[] = [];
  let exists = false;
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://qdrant').pathname;
      const method = request.method ?? 'GET';
      requests.push({ method, path, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined });
      if (!answer) return;
      let result: unknown = { operation_id: requests.length, status: 'completed' };
      if (path.endsWith('/exists')) result = { exists };
      else if (path.endsWith('/points/scroll')) result = { points: [], next_page_offset: null };
      else if (path.endsWith('/points/query')) result = { points: [{ id: pointId('mem_hit'), version: 1, score: 0.875, payload: { memory_id: 'mem_hit' } }] };
      else if (method === 'PUT' && /^\/collections\/[^/]+$/.test(path)) {
        exists = true;
        result = true;
      }
      else if (method === 'GET' && /^\/collections\/[^/]+$/.test(path)) result = { config: { params: { vectors: { size: DIMENSIONS, distance: 'Cosine' } } } };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result, status: 'ok', time: 0 }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('QdrantVectorStore requests', () => {
  it('creates the collection and its keyword payload indexes at open', async () => {
    const qdrant = await recordingQdrant();
    const store = new QdrantVectorStore({ url: qdrant.url, model: 'hashing', dimensions: DIMENSIONS });
    await store.open(new FakeDatabase());
    const base = `/collections/${collectionName('hashing', DIMENSIONS)}`;
    expect(qdrant.requests).toContainEqual({ method: 'PUT', path: base, body: expect.objectContaining({ vectors: { size: DIMENSIONS, distance: 'Cosine' } }) });
    const indexes = qdrant.requests.filter((request) => request.path === `${base}/index`).map((request) => request.body);
    expect(indexes).toEqual([
      expect.objectContaining({ field_name: 'tenant_id', field_schema: { type: 'keyword', is_tenant: true } }),
      expect.objectContaining({ field_name: 'agent_id', field_schema: 'keyword' }),
      expect.objectContaining({ field_name: 'memory_type', field_schema: 'keyword' }),
      expect.objectContaining({ field_name: 'memory_id', field_schema: 'keyword' }),
      expect.objectContaining({ field_name: 'user_id', field_schema: 'keyword' }),
    ]);
  });

  it('stores points under a UUIDv5 of the memory id, with the owner and end user in the payload', async () => {
    const qdrant = await recordingQdrant();
    const store = new QdrantVectorStore({ url: qdrant.url, model: 'hashing', dimensions: DIMENSIONS });
    await store.open(new FakeDatabase());
    const owner = newOwner();
    const item = record(owner, new Float32Array([3, 0, 4, 0]), 'episodic', 'mem_01JABCDEFGHJKMNPQRSTVWXYZ0');
    const usersItem = userRecord(owner, 'user-42', mix(DIMENSIONS, [1]));
    await store.upsert([item, usersItem]);
    const upsert = qdrant.requests.find((request) => request.method === 'PUT' && request.path.endsWith('/points'));
    // python3 -c "import uuid; print(uuid.uuid5(uuid.UUID('5f0c9a4e-7d2b-4c1a-9e3f-6b8d2a7c4e10'), 'mem_01JABCDEFGHJKMNPQRSTVWXYZ0'))"
    expect(upsert?.body?.points).toEqual([
      {
        id: 'd84244b5-1cb1-5533-9123-3970c76e83dc',
        vector: [expect.closeTo(0.6, 6), 0, expect.closeTo(0.8, 6), 0],
        // A shared item has no user_id at all, like the points written before end users.
        payload: { tenant_id: owner.tenantId, agent_id: owner.agentId, memory_type: 'episodic', memory_id: item.id },
      },
      {
        id: pointId(usersItem.id),
        vector: [0, 1, 0, 0],
        payload: { tenant_id: owner.tenantId, agent_id: owner.agentId, memory_type: 'semantic', memory_id: usersItem.id, user_id: 'user-42' },
      },
    ]);
  });

  it('filters every search and agent deletion by tenant and agent', async () => {
    const qdrant = await recordingQdrant();
    const store = new QdrantVectorStore({ url: qdrant.url, model: 'hashing', dimensions: DIMENSIONS });
    await store.open(new FakeDatabase());
    const owner = newOwner();
    const ownerMust = [
      { key: 'tenant_id', match: { value: owner.tenantId } },
      { key: 'agent_id', match: { value: owner.agentId } },
    ];
    expect(await store.search({ ...owner, vector: mix(DIMENSIONS, [0]), limit: 3, memoryTypes: ['semantic', 'episodic'] })).toEqual([{ id: 'mem_hit', score: 0.875 }]);
    await store.search({ ...owner, vector: mix(DIMENSIONS, [1]), limit: 3 });
    await store.deleteAgent(owner.tenantId, owner.agentId);
    const queries = qdrant.requests.filter((request) => request.path.endsWith('/points/query')).map((request) => request.body);
    expect(queries).toEqual([
      expect.objectContaining({ limit: 3, filter: { must: [...ownerMust, { key: 'memory_type', match: { any: ['semantic', 'episodic'] } }] } }),
      expect.objectContaining({ limit: 3, filter: { must: ownerMust } }),
    ]);
    const deletion = qdrant.requests.find((request) => request.path.endsWith('/points/delete'));
    expect(deletion?.body).toEqual(expect.objectContaining({ filter: { must: ownerMust } }));
  });

  it("narrows a search for an end user to that user's items and the shared ones", async () => {
    const qdrant = await recordingQdrant();
    const store = new QdrantVectorStore({ url: qdrant.url, model: 'hashing', dimensions: DIMENSIONS });
    await store.open(new FakeDatabase());
    const owner = newOwner();
    const ownerMust = [
      { key: 'tenant_id', match: { value: owner.tenantId } },
      { key: 'agent_id', match: { value: owner.agentId } },
    ];
    const shared = { is_empty: { key: 'user_id' } };
    await store.search({ ...owner, vector: mix(DIMENSIONS, [0]), limit: 4, audience: { userId: 'user-42' } });
    await store.search({ ...owner, vector: mix(DIMENSIONS, [0]), limit: 4, audience: { userId: null } });
    await store.search({ ...owner, vector: mix(DIMENSIONS, [0]), limit: 4, memoryTypes: ['semantic'], audience: { userId: 'user-7' } });
    const queries = qdrant.requests.filter((request) => request.path.endsWith('/points/query')).map((request) => request.body);
    expect(queries).toEqual([
      expect.objectContaining({ filter: { must: [...ownerMust, { should: [shared, { key: 'user_id', match: { value: 'user-42' } }] }] } }),
      expect.objectContaining({ filter: { must: [...ownerMust, shared] } }),
      expect.objectContaining({
        filter: {
          must: [...ownerMust, { key: 'memory_type', match: { any: ['semantic'] } }, { should: [shared, { key: 'user_id', match: { value: 'user-7' } }] }],
        },
      }),
    ]);
  });

  it('reports an unreachable or silent server as service_unavailable', async () => {
    const silent = await recordingQdrant(false);
    const slow = new QdrantVectorStore({ url: silent.url, model: 'hashing', dimensions: DIMENSIONS, timeoutMs: 200 });
    await expect(slow.open(new FakeDatabase())).rejects.toMatchObject({ name: 'DomainError', code: 'service_unavailable' });
    const closed = await recordingQdrant();
    const gone = servers.pop()!;
    await new Promise((resolve) => gone.close(resolve));
    const unreachable = new QdrantVectorStore({ url: closed.url, model: 'hashing', dimensions: DIMENSIONS });
    await expect(unreachable.open(new FakeDatabase())).rejects.toMatchObject({ name: 'DomainError', code: 'service_unavailable' });
  });

  it('names collections by model and dimension, in characters Qdrant accepts', () => {
    expect(collectionName('text-embedding-3-small', 1536)).toMatch(/^memory_text_embedding_3_small_1536_[0-9a-f]{8}$/);
    expect(collectionName('Org/Model:v2 ☃', 384)).toMatch(/^memory_org_model_v2_384_[0-9a-f]{8}$/);
    const names = [collectionName('a-b', 384), collectionName('a_b', 384), collectionName('a-b', 768), collectionName('hashing', 384)];
    expect(new Set(names).size).toBe(names.length);
    expect(pointId('mem_a')).not.toBe(pointId('mem_b'));
  });
});
