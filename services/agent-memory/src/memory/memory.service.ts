import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Logger, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { metrics } from '@opentelemetry/api';
import type { AgentRecord, MemoryType } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { hasMemoryType } from '../agents/agents.service.js';
import { chunkText } from '../documents/chunking.js';
import type { Embedder } from '../models/embedder.js';
import type { VectorStore } from '../vectors/vector-store.js';
import { fullTextTerms, rank, type Ranked } from './hybrid-ranking.js';
import type { MemoryItem } from './memory.entity.js';
import { checkFilter, checkMetadata, checkMinScore, checkText, checkTitle, checkTopK, CONTENT_MAX, DOCUMENT_MAX, type Filter } from './memory-input.js';
import type { CandidateScope, MemoryItemView, MemoryRepository, NewDocument, NewMemoryItem } from './memory.repository.js';

export interface MemoryServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  memory: MemoryRepository;
  embedder: Embedder;
  vectors: VectorStore;
  logger: Logger;
}

export interface SearchRequest {
  agentId: string;
  query: string;
  memoryType: string | undefined;
  topK: number;
  minScore: number | undefined;
  filterJson: string | undefined;
}

// Candidates each half of hybrid search contributes, at least; more for a larger top_k. Each is
// re-scored from its stored text and vector, so the pool is kept to what ranking needs.
/** Memory search (and chat's retrieval) from the query's embedding to the ranked answer. */
const searchDuration = metrics.getMeter('@agent-platform/agent-memory').createHistogram('agent_memory.search.duration', {
  unit: 's',
  description: 'Duration of memory searches within one agent (embedding, index, full text and ranking), by mode.',
  advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] },
});

const CANDIDATES_MIN = 20;
const CANDIDATES_PER_RESULT = 4;
// A filtered scope this small is ranked exactly from the database; a larger one over-fetches
// from the index, which cannot filter on metadata.
const EXACT_SCAN_MAX = 5_000;
const FILTERED_OVERFETCH = 500;
// A document of this many chunks or more is a bulk load: the table's statistics are refreshed.
const BULK_LOAD_ROWS = 500;

/** Memory of the actor's tenant's agents: items, documents and hybrid search over them. */
export class MemoryService {
  private readonly options: MemoryServiceOptions;

  constructor(options: MemoryServiceOptions) {
    this.options = options;
  }

  async add(actor: Actor, request: { agentId: string; memoryType: string; content: string; metadataJson: string | undefined }, now = new Date()): Promise<MemoryItemView> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    if (!hasMemoryType(agent, request.memoryType)) errors.add('memory_type', `must be one of the agent's memory_types: ${agent.memoryTypes.join(', ')}`);
    const content = checkText('content', request.content, CONTENT_MAX, errors);
    const metadata = checkMetadata(request.metadataJson, errors);
    errors.throwIfAny();
    const [item] = await this.store(agent, [{ memoryType: request.memoryType as MemoryType, content, metadata, documentId: null }], now);
    return item!;
  }

  async search(actor: Actor, request: SearchRequest): Promise<Ranked[]> {
    requireAccess(actor, ACCESS.memory.read);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    checkText('query', request.query, CONTENT_MAX, errors);
    const topK = checkTopK(request.topK, errors);
    const minScore = checkMinScore(request.minScore, errors);
    const filter = checkFilter(request.filterJson, errors);
    if (request.memoryType !== undefined && !hasMemoryType(agent, request.memoryType)) {
      errors.add('memory_type', `must be one of the agent's memory_types: ${agent.memoryTypes.join(', ')}`);
    }
    errors.throwIfAny();
    const types = request.memoryType === undefined ? agent.memoryTypes : [request.memoryType];
    return this.retrieve(agent, request.query, { limit: topK, minScore, filter, memoryTypes: types });
  }

  /**
   * Hybrid search within one agent: the index's nearest vectors and the full-text matches are
   * pooled, then every candidate is scored exactly from its stored vector and text. Ids the
   * index returns that the database no longer has (a crash between the two) simply drop out.
   */
  async retrieve(agent: AgentRecord, query: string, options: { limit: number; minScore: number; filter: Filter | undefined; memoryTypes: readonly string[] }): Promise<Ranked[]> {
    const { embedder, vectors, memory } = this.options;
    const started = performance.now();
    const [queryVector] = await embedder.embed([query]);
    const scope: CandidateScope = { tenantId: agent.tenantId, agentId: agent.id, memoryTypes: options.memoryTypes, filter: options.filter, embeddingModel: embedder.model };
    const pool = Math.max(CANDIDATES_MIN, options.limit * CANDIDATES_PER_RESULT);
    let candidates;
    let mode: 'exact' | 'hybrid' = 'exact';
    if (options.filter !== undefined && (await memory.count(scope)) <= EXACT_SCAN_MAX) {
      candidates = await memory.candidates(scope, undefined);
    } else {
      mode = 'hybrid';
      const [nearest, lexical] = await Promise.all([
        vectors.search({ tenantId: agent.tenantId, agentId: agent.id, vector: queryVector!, limit: options.filter ? FILTERED_OVERFETCH : pool, memoryTypes: options.memoryTypes }),
        memory.lexicalMatches(scope, fullTextTerms(query), pool),
      ]);
      candidates = await memory.candidates(scope, [...new Set([...nearest.map((hit) => hit.id), ...lexical])]);
    }
    const ranked = rank(query, queryVector!, candidates, { limit: options.limit, minScore: options.minScore });
    searchDuration.record((performance.now() - started) / 1000, { 'agent_memory.search.mode': mode });
    return ranked;
  }

  async list(actor: Actor, agentId: string, memoryType: string | undefined, page: Page): Promise<{ items: MemoryItem[]; total: number }> {
    requireAccess(actor, ACCESS.memory.read);
    await this.agent(actor, agentId);
    return this.options.memory.list(actor.tenantId, agentId, memoryType, page.perPage, page.offset);
  }

  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.memory.write);
    const agentId = await this.options.memory.deleteItem(actor.tenantId, id);
    if (agentId === undefined) throw DomainError.notFound('Memory item');
    await this.forgetVectors([id]);
  }

  async addDocument(
    actor: Actor,
    request: { agentId: string; title: string | undefined; content: string; metadataJson: string | undefined },
    now = new Date(),
  ): Promise<NewDocument> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    if (!hasMemoryType(agent, 'semantic')) errors.add('agent_id', 'the agent keeps no semantic memory, where documents are stored');
    const title = request.title === undefined ? null : checkTitle(request.title, errors);
    checkText('content', request.content, DOCUMENT_MAX, errors);
    const metadata = checkMetadata(request.metadataJson, errors);
    errors.throwIfAny();
    const chunks = chunkText(request.content);
    const documentId = newId('document');
    const document: NewDocument = { id: documentId, tenantId: actor.tenantId, agentId: agent.id, title, chunks: chunks.length, createdAt: now };
    await this.store(
      agent,
      chunks.map((content, index) => ({ memoryType: 'semantic', content, documentId, metadata: { ...metadata, document_id: documentId, chunk_index: index, ...(title ? { title } : {}) } })),
      now,
      document,
    );
    if (chunks.length >= BULK_LOAD_ROWS) this.refreshStatistics();
    return document;
  }

  async deleteDocument(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.memory.write);
    const chunkIds = await this.options.memory.deleteDocument(actor.tenantId, id);
    if (chunkIds === undefined) throw DomainError.notFound('Document');
    await this.forgetVectors(chunkIds);
  }

  /**
   * Embeds, then writes the rows (and their document) in one transaction, then indexes the
   * vectors. An embedder failure stores nothing; an index failure takes the rows back out, so
   * nothing is stored that search cannot find.
   */
  async store(
    agent: AgentRecord,
    drafts: readonly { memoryType: MemoryType; content: string; metadata: Record<string, unknown>; documentId: string | null }[],
    now: Date,
    document?: NewDocument,
  ): Promise<MemoryItemView[]> {
    const { embedder, em, memory, vectors } = this.options;
    const embeddings = await embedder.embed(drafts.map((draft) => draft.content));
    const items: NewMemoryItem[] = drafts.map((draft, index) => ({
      id: newId('memoryItem'),
      tenantId: agent.tenantId,
      agentId: agent.id,
      ...draft,
      embedding: embeddings[index]!,
      embeddingModel: embedder.model,
      createdAt: now,
    }));
    await em.transactional(() => memory.insert(document, items));
    try {
      await vectors.upsert(items.map((item) => ({ id: item.id, tenantId: item.tenantId, agentId: item.agentId, memoryType: item.memoryType, vector: item.embedding })));
    } catch (error) {
      await em.transactional(async (tx) => {
        await tx.execute(`delete from "memory_items" where "id" in (?)`, [items.map((item) => item.id)], 'run');
        if (document) await tx.execute(`delete from "memory_documents" where "id" = ?`, [document.id], 'run');
      });
      throw new DomainError('service_unavailable', 'The vector index is unavailable; nothing was stored.', { cause: error });
    }
    return items.map(({ embedding: _vector, embeddingModel: _model, tenantId: _tenant, documentId: _document, ...view }) => view);
  }

  /**
   * After a bulk load, as PostgreSQL advises: until autovacuum gets to it (a minute or more), the
   * planner would think the table small and scan an agent's rows instead of the full-text index.
   * In the background: the document is stored whatever happens here.
   */
  private refreshStatistics(): void {
    void this.options.em
      .fork()
      .execute(`analyze "memory_items"`, [], 'run')
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not refresh the statistics of memory_items'));
  }

  private async agent(actor: Actor, agentId: string): Promise<AgentRecord> {
    const agent = await this.options.agents.find(actor.tenantId, agentId);
    if (!agent) throw DomainError.notFound('Agent');
    return agent;
  }

  /** Index entries of deleted rows: a failure leaves stale ids, which search ignores and the next start drops. */
  private async forgetVectors(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.options.vectors.delete(ids);
    } catch (error) {
      this.options.logger.warn({ err: error, count: ids.length }, 'vectors of deleted memory were not removed; they are ignored and dropped at the next start');
    }
  }
}
