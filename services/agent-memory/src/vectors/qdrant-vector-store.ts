/**
 * The VectorStore on a Qdrant server. One collection per embedding model (its name carries the
 * model and dimension, so vectors of two models can never share one), cosine distance, and the
 * payload fields `tenant_id`, `agent_id`, `memory_type`, `memory_id` and `user_id` with keyword
 * indexes (`tenant_id` flagged as the tenant key, which Qdrant uses to co-locate a tenant's
 * points). A shared item has no `user_id`, as have the points written before end users existed.
 * Every search and agent deletion carries tenant AND agent as `must` conditions, and a search for
 * an end user carries "no `user_id` or this one" too: isolation is enforced by each request, not
 * by the caller's care.
 *
 * Qdrant point ids must be unsigned integers or UUIDs, so a point's id is a UUIDv5 of the memory
 * id; the memory id itself travels in the payload and is what searches return.
 *
 * Reconciliation at open: the collection's `memory_id`s are scrolled (ids only) and compared
 * with `source.ids()`; missing items are fetched and upserted, extra points deleted. Vectors
 * re-embedded in place are not compared: Qdrant's writes are durable on their own, so the index
 * only drifts when a write to it failed, which the caller retries or reports.
 */
import { createHash } from 'node:crypto';
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { DomainError } from '@agent-platform/kit';
import { fetchInBatches, type SimilarityQuery, unitVector, type VectorHit, type VectorQuery, type VectorRecord, type VectorSource, type VectorStore } from './vector-store.js';

export interface QdrantVectorStoreOptions {
  url: string;
  apiKey?: string;
  model: string;
  dimensions: number;
  /** Per request; the client's own default is five minutes. */
  timeoutMs?: number;
}

const PAYLOAD_FIELDS = ['tenant_id', 'agent_id', 'memory_type', 'memory_id', 'user_id'] as const;
const UPSERT_BATCH = 256;
const SCROLL_PAGE = 1_000;
/** A fixed namespace for UUIDv5 point ids (RFC 9562 §5.5); changing it orphans every point. */
const POINT_NAMESPACE = Buffer.from('5f0c9a4e7d2b4c1a9e3f6b8d2a7c4e10', 'hex');

/** The collection of one embedding model: `memory_<model>_<dimensions>_<hash>`, Qdrant-safe. */
export function collectionName(model: string, dimensions: number): string {
  const readable = model.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  // Two models can sanitise to the same text ("a-b", "a_b"); the digest keeps them apart.
  const digest = createHash('sha256').update(model).digest('hex').slice(0, 8);
  return `memory_${readable || 'model'}_${dimensions}_${digest}`;
}

/** The Qdrant point id of a memory item: a UUIDv5 of its id, the same on every run. */
export function pointId(memoryId: string): string {
  const bytes = createHash('sha1').update(POINT_NAMESPACE).update(memoryId, 'utf8').digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class QdrantVectorStore implements VectorStore {
  readonly kind = 'qdrant';
  readonly collection: string;
  private readonly client: QdrantClient;
  private state: 'new' | 'open' | 'closed' = 'new';

  constructor(private readonly options: QdrantVectorStoreOptions) {
    this.collection = collectionName(options.model, options.dimensions);
    this.client = new QdrantClient({
      url: options.url,
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      // The check is a request fired from the constructor whose failure only reaches console.warn.
      checkCompatibility: false,
    });
  }

  async open(source: VectorSource): Promise<void> {
    if (this.state !== 'new') throw new Error(`vector store cannot open: it is ${this.state}`);
    await this.call('prepare the collection', () => this.prepareCollection());
    const wanted = await source.ids();
    const present = await this.call('list points', () => this.storedMemoryIds());
    const wantedSet = new Set(wanted);
    const extra = [...present].filter((id) => !wantedSet.has(id));
    if (extra.length > 0) await this.call('delete points', () => this.deletePoints(extra));
    this.state = 'open';
    await fetchInBatches(
      source,
      wanted.filter((id) => !present.has(id)),
      (records) => this.upsert(records),
    );
  }

  async upsert(records: readonly VectorRecord[]): Promise<void> {
    this.assertOpen();
    const points: Schemas['PointStruct'][] = records.map((record) => ({
      id: pointId(record.id),
      vector: Array.from(unitVector(record.vector, this.options.dimensions)),
      payload: {
        tenant_id: record.tenantId,
        agent_id: record.agentId,
        memory_type: record.memoryType,
        memory_id: record.id,
        ...(record.userId === null ? {} : { user_id: record.userId }),
      },
    }));
    for (let start = 0; start < points.length; start += UPSERT_BATCH) {
      const batch = points.slice(start, start + UPSERT_BATCH);
      await this.call('upsert points', () => this.client.upsert(this.collection, { wait: true, points: batch }));
    }
  }

  async search(query: VectorQuery): Promise<VectorHit[]> {
    this.assertOpen();
    const vector = Array.from(unitVector(query.vector, this.options.dimensions));
    const limit = Math.floor(query.limit);
    if (!(limit >= 1) || query.memoryTypes?.length === 0) return [];
    const must: Schemas['Condition'][] = ownerConditions(query.tenantId, query.agentId);
    if (query.memoryTypes) must.push({ key: 'memory_type', match: { any: [...query.memoryTypes] } });
    if (query.audience) must.push(audienceCondition(query.audience.userId));
    const response = await this.call('search', () =>
      this.client.query(this.collection, { query: vector, filter: { must }, limit, with_payload: ['memory_id'] }),
    );
    return hitsOf(response.points);
  }

  async similarities(query: SimilarityQuery): Promise<VectorHit[]> {
    this.assertOpen();
    const vector = Array.from(unitVector(query.vector, this.options.dimensions));
    if (query.ids.length === 0) return [];
    // Scored against exactly these points, still within the owner: an id of another agent is no match.
    const filter = { must: [...ownerConditions(query.tenantId, query.agentId), { has_id: query.ids.map(pointId) }] };
    const response = await this.call('score', () => this.client.query(this.collection, { query: vector, filter, limit: query.ids.length, with_payload: ['memory_id'] }));
    return hitsOf(response.points);
  }

  async delete(ids: readonly string[]): Promise<void> {
    this.assertOpen();
    if (ids.length > 0) await this.call('delete points', () => this.deletePoints(ids));
  }

  async deleteAgent(tenantId: string, agentId: string): Promise<void> {
    this.assertOpen();
    await this.call('delete an agent', () => this.client.delete(this.collection, { wait: true, filter: { must: ownerConditions(tenantId, agentId) } }));
  }

  /** The REST client holds no connection of its own to release (undici's pool is global). */
  close(): Promise<void> {
    this.state = 'closed';
    return Promise.resolve();
  }

  private async prepareCollection(): Promise<void> {
    const { exists } = await this.client.collectionExists(this.collection);
    if (!exists) {
      try {
        await this.client.createCollection(this.collection, { vectors: { size: this.options.dimensions, distance: 'Cosine' } });
      } catch (error) {
        // Another replica may have created it between the check and the creation.
        if (!(await this.client.collectionExists(this.collection)).exists) throw error;
      }
    }
    const info = await this.client.getCollection(this.collection);
    const vectors = info.config.params.vectors;
    if (!vectors || !('size' in vectors) || vectors.size !== this.options.dimensions || vectors.distance !== 'Cosine') {
      throw new Error(`collection ${this.collection} exists with other vector parameters than ${this.options.dimensions}-dimension cosine`);
    }
    // Creating an index that exists is accepted by Qdrant, so this runs at every open.
    for (const field of PAYLOAD_FIELDS) {
      const schema: Schemas['PayloadFieldSchema'] = field === 'tenant_id' ? { type: 'keyword', is_tenant: true } : 'keyword';
      await this.client.createPayloadIndex(this.collection, { wait: true, field_name: field, field_schema: schema });
    }
  }

  private async storedMemoryIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    let offset: Schemas['ExtendedPointId'] | undefined;
    do {
      const page = await this.client.scroll(this.collection, { limit: SCROLL_PAGE, with_payload: ['memory_id'], with_vector: false, ...(offset === undefined ? {} : { offset }) });
      for (const point of page.points) if (typeof point.payload?.memory_id === 'string') ids.add(point.payload.memory_id);
      const next = page.next_page_offset;
      offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
    } while (offset !== undefined);
    return ids;
  }

  private async deletePoints(ids: readonly string[]): Promise<void> {
    for (let start = 0; start < ids.length; start += UPSERT_BATCH) {
      await this.client.delete(this.collection, { wait: true, points: ids.slice(start, start + UPSERT_BATCH).map(pointId) });
    }
  }

  /** Runs a Qdrant request; a failure becomes `service_unavailable`, keeping the cause. */
  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof DomainError || error instanceof RangeError) throw error;
      throw new DomainError('service_unavailable', `The vector index could not ${what}.`, { cause: error });
    }
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new Error(`vector store is ${this.state}, not open`);
  }
}

/** Shared items (no `user_id`), and `userId`'s items when the search is made for an end user. */
function audienceCondition(userId: string | null): Schemas['Condition'] {
  const shared: Schemas['Condition'] = { is_empty: { key: 'user_id' } };
  return userId === null ? shared : { should: [shared, { key: 'user_id', match: { value: userId } }] };
}

function hitsOf(points: readonly { score: number; payload?: Record<string, unknown> | null }[]): VectorHit[] {
  const hits: VectorHit[] = [];
  for (const point of points) {
    const id = point.payload?.memory_id;
    if (typeof id === 'string') hits.push({ id, score: point.score });
  }
  return hits;
}

function ownerConditions(tenantId: string, agentId: string): Schemas['Condition'][] {
  return [
    { key: 'tenant_id', match: { value: tenantId } },
    { key: 'agent_id', match: { value: agentId } },
  ];
}
