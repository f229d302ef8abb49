import { ACCESS, DomainError, FieldErrors, isId, newId, requireAccess, type Actor, type Logger, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { metrics } from '@opentelemetry/api';
import type { AgentRecord, MemoryType } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { found, hasMemoryType } from '../agents/agents.service.js';
import type { RecentAgents } from '../agents/recent-agents.js';
import { cosine, type Embedder } from '../models/embedder.js';
import type { VectorStore } from '../vectors/vector-store.js';
import { embeddedText } from './embedded-text.js';
import { fullTextWords, rank, type Ranked, type Scored } from './hybrid-ranking.js';
import { checkFilter, checkMetadata, checkMinScore, checkText, checkTopK, checkUserId, CONTENT_MAX, type Filter } from './memory-input.js';
import type {
  Audience,
  Candidate,
  CandidateScope,
  ChangeSource,
  HistoryView,
  ItemSelection,
  MemoryItemView,
  NewMemoryItem,
} from './memory-items.js';
import type { MemoryBulkDeleteRepository } from './memory-bulk-delete.repository.js';
import type { MemoryHistoryRepository } from './memory-history.repository.js';
import type { MemoryRepository } from './memory.repository.js';
import type { MemorySearchRepository } from './memory-search.repository.js';

export interface MemoryServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  /** The agent of each search: read at most once in a while (a search changes nothing). */
  recentAgents: RecentAgents;
  memory: MemoryRepository;
  search: MemorySearchRepository;
  history: MemoryHistoryRepository;
  bulkDeletes: MemoryBulkDeleteRepository;
  embedder: Embedder;
  vectors: VectorStore;
  logger: Logger;
  /**
   * The models of items not yet re-embedded with the embedder's (see `Reembedding`): search finds
   * those by their words meanwhile. Default: none.
   */
  notYetReembedded?: () => readonly string[];
}

export interface SearchRequest {
  agentId: string;
  query: string;
  memoryType: string | undefined;
  topK: number;
  minScore: number | undefined;
  filterJson: string | undefined;
  userId: string | undefined;
}

/** An item to store: what `add`, documents, consolidation and extraction write. */
export interface MemoryDraft {
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  documentId: string | null;
  userId: string | null;
}

const API_CHANGE: ChangeSource = { source: 'api', sessionId: null };

/** Memory search (and chat's retrieval) from the query's embedding to the ranked answer. */
const searchDuration = metrics.getMeter('@agent-platform/agent-memory').createHistogram('agent_memory.search.duration', {
  unit: 's',
  description: 'Duration of memory searches within one agent (embedding, index, full text and ranking), by mode.',
  advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] },
});

// Candidates each half of hybrid search contributes, at least; more for a larger top_k. Each is
// read back and ranked by its text and the index's cosine, so the pool is kept to what ranking needs.
const CANDIDATES_MIN = 20;
const CANDIDATES_PER_RESULT = 4;
// A filtered scope this small is ranked exactly from the database; a larger one over-fetches
// from the index, which cannot filter on metadata.
const EXACT_SCAN_MAX = 5_000;
const FILTERED_OVERFETCH = 500;
// A document of this many chunks or more is a bulk load: the table's statistics are refreshed.
const BULK_LOAD_ROWS = 500;

/** Candidates scored from their stored vectors. */
function scoredExactly(queryVector: Float32Array, candidates: readonly Candidate[]): Scored[] {
  return candidates.map(({ embedding, ...candidate }) => ({ candidate, similarity: cosine(queryVector, embedding) }));
}

/** Memory of the actor's tenant's agents: items, documents and hybrid search over them. */
export class MemoryService {
  private readonly options: MemoryServiceOptions;

  constructor(options: MemoryServiceOptions) {
    this.options = options;
  }

  async add(
    actor: Actor,
    request: { agentId: string; memoryType: string; content: string; metadataJson: string | undefined; userId: string | undefined },
    now = new Date(),
  ): Promise<MemoryItemView> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    if (!hasMemoryType(agent, request.memoryType)) errors.add('memory_type', `must be one of the agent's memory_types: ${agent.memoryTypes.join(', ')}`);
    const content = checkText('content', request.content, CONTENT_MAX, errors);
    const metadata = checkMetadata(request.metadataJson, errors);
    const userId = checkUserId(request.userId, errors) ?? null;
    errors.throwIfAny();
    const [item] = await this.store(agent, [{ memoryType: request.memoryType as MemoryType, content, metadata, documentId: null, userId }], now, API_CHANGE);
    return item!;
  }

  /** PATCH: new content (re-embedded) and/or metadata; the change is recorded in the item's history. */
  async update(actor: Actor, request: { memoryId: string; content: string | undefined; metadataJson: string | undefined }, now = new Date()): Promise<MemoryItemView> {
    requireAccess(actor, ACCESS.memory.write);
    const errors = new FieldErrors();
    const content = request.content === undefined ? undefined : checkText('content', request.content, CONTENT_MAX, errors);
    const metadata = request.metadataJson === undefined ? undefined : checkMetadata(request.metadataJson, errors);
    if (content === undefined && metadata === undefined) errors.add('content', 'give content or metadata to change');
    errors.throwIfAny();
    const item = await this.options.memory.find(actor.tenantId, request.memoryId);
    if (!item) throw DomainError.notFound('Memory item');
    const updated = await this.change(actor.tenantId, item, { ...(content === undefined ? {} : { content }), ...(metadata === undefined ? {} : { metadata }) }, API_CHANGE, now);
    if (!updated) throw DomainError.notFound('Memory item');
    return updated;
  }

  /**
   * Changes one stored item: re-embeds it first when its embedded text changes (new content, or a
   * chunk's new heading path; a provider failure changes nothing), then writes the row and its
   * history in one transaction, then the index. Undefined when the item was deleted meanwhile.
   */
  async change(
    tenantId: string,
    item: Pick<Candidate, 'id' | 'agentId' | 'memoryType' | 'userId' | 'content' | 'documentId' | 'metadata'>,
    change: { content?: string; metadata?: Record<string, unknown> },
    source: ChangeSource,
    now: Date,
  ): Promise<MemoryItemView | undefined> {
    const { embedder, em, memory } = this.options;
    const newContent = change.content !== undefined && change.content !== item.content ? change.content : undefined;
    const text = embeddedText({ documentId: item.documentId, content: newContent ?? item.content, metadata: change.metadata ?? item.metadata });
    const embedding = text === embeddedText(item) ? undefined : (await embedder.embed([text]))[0]!;
    return em.transactional(async () => {
      const updated = await memory.update(
        tenantId,
        item.id,
        {
          ...(newContent === undefined ? {} : { content: newContent }),
          ...(embedding === undefined ? {} : { embedding, embeddingModel: embedder.model }),
          ...(change.metadata ? { metadata: change.metadata } : {}),
        },
        source,
        now,
      );
      // Inside the transaction: an index that cannot take the new vector leaves the old content in place.
      if (updated && embedding) await this.index([{ id: item.id, tenantId, agentId: item.agentId, memoryType: item.memoryType, userId: item.userId, embedding }]);
      return updated;
    });
  }

  async search(actor: Actor, request: SearchRequest): Promise<Ranked[]> {
    requireAccess(actor, ACCESS.memory.read);
    const agent = found(await this.options.recentAgents.find(actor.tenantId, request.agentId));
    const errors = new FieldErrors();
    checkText('query', request.query, CONTENT_MAX, errors);
    const topK = checkTopK(request.topK, errors);
    const minScore = checkMinScore(request.minScore, errors);
    const filter = checkFilter(request.filterJson, errors);
    if (request.memoryType !== undefined && !hasMemoryType(agent, request.memoryType)) {
      errors.add('memory_type', `must be one of the agent's memory_types: ${agent.memoryTypes.join(', ')}`);
    }
    const userId = checkUserId(request.userId, errors);
    errors.throwIfAny();
    const types = request.memoryType === undefined ? agent.memoryTypes : [request.memoryType];
    return this.retrieve(agent, request.query, { limit: topK, minScore, filter, memoryTypes: types, audience: userId === undefined ? undefined : { userId } });
  }

  /**
   * Hybrid search within one agent: the index's nearest vectors and the full-text matches are
   * pooled, then every candidate is scored exactly from its full-precision vector and its text
   * (a small filtered scope: every item of it, from the database). Ids the index returns that
   * the database no longer has (a crash between the two) simply drop out.
   */
  async retrieve(
    agent: AgentRecord,
    query: string,
    options: { limit: number; minScore: number; filter: Filter | undefined; memoryTypes: readonly string[]; audience: Audience | undefined },
  ): Promise<Ranked[]> {
    const { embedder, search } = this.options;
    const started = performance.now();
    const [queryVector] = await embedder.embed([query]);
    const scope: CandidateScope = {
      tenantId: agent.tenantId,
      agentId: agent.id,
      memoryTypes: options.memoryTypes,
      filter: options.filter,
      audience: options.audience,
      embeddingModel: embedder.model,
    };
    const exact = options.filter !== undefined && (await search.count(scope)) <= EXACT_SCAN_MAX;
    const scored = exact ? scoredExactly(queryVector!, await search.candidates(scope, undefined)) : await this.hybridCandidates(scope, query, queryVector!, options);
    const models = this.options.notYetReembedded?.() ?? [];
    if (models.length > 0) scored.push(...(await this.notYetReembedded(scope, models, query, queryVector!, options.limit, scored)));
    const ranked = rank(query, scored, { limit: options.limit, minScore: options.minScore });
    searchDuration.record((performance.now() - started) / 1000, { 'agent_memory.search.mode': exact ? 'exact' : 'hybrid' });
    return ranked;
  }

  /**
   * The index's nearest vectors pooled with the full-text matches, each with its similarity: the
   * index scores what it found and what full text found (its vectors stay out of the database's
   * answer); an item the index lacks (a crash between the two) is scored from its stored vector.
   */
  private async hybridCandidates(scope: CandidateScope, query: string, queryVector: Float32Array, options: { limit: number; filter: Filter | undefined }): Promise<Scored[]> {
    const { vectors, search } = this.options;
    const owner = { tenantId: scope.tenantId, agentId: scope.agentId };
    const pool = Math.max(CANDIDATES_MIN, options.limit * CANDIDATES_PER_RESULT);
    const [nearest, lexical] = await Promise.all([
      vectors.search({
        ...owner,
        vector: queryVector,
        limit: options.filter ? FILTERED_OVERFETCH : pool,
        memoryTypes: scope.memoryTypes,
        ...(scope.audience ? { audience: scope.audience } : {}),
      }),
      search.lexicalMatches(scope, fullTextWords(query), pool),
    ]);
    const similarity = new Map(nearest.map((hit) => [hit.id, hit.score]));
    const lexicalOnly = lexical.filter((id) => !similarity.has(id));
    const [found, lexicalHits] = await Promise.all([
      search.found(scope, [...similarity.keys(), ...lexicalOnly]),
      lexicalOnly.length === 0 ? [] : vectors.similarities({ ...owner, vector: queryVector, ids: lexicalOnly }),
    ]);
    for (const hit of lexicalHits) similarity.set(hit.id, hit.score);
    const unindexed = found.filter((item) => !similarity.has(item.id)).map((item) => item.id);
    for (const { candidate, similarity: score } of scoredExactly(queryVector, await search.candidates(scope, unindexed))) similarity.set(candidate.id, score);
    return found.flatMap((candidate) => {
      const score = similarity.get(candidate.id);
      return score === undefined ? [] : [{ candidate, similarity: score }];
    });
  }

  /**
   * While items wait to be re-embedded after an embedder change: those of them holding the query's
   * words, scored with vectors made now from their embedded text by the current embedder, as they
   * will be once re-embedded (an item is found by meaning alone only then). An item re-embedded
   * since `scored` was read is left there.
   */
  private async notYetReembedded(scope: CandidateScope, models: readonly string[], query: string, queryVector: Float32Array, limit: number, scored: readonly Scored[]): Promise<Scored[]> {
    const pool = Math.max(CANDIDATES_MIN, limit * CANDIDATES_PER_RESULT);
    const seen = new Set(scored.map((entry) => entry.candidate.id));
    const found = (await this.options.search.otherModelMatches(scope, models, fullTextWords(query), pool)).filter((item) => !seen.has(item.id));
    if (found.length === 0) return [];
    const vectors = await this.options.embedder.embed(found.map(embeddedText));
    return found.map((candidate, index) => ({ candidate, similarity: cosine(queryVector, vectors[index]!) }));
  }

  async list(actor: Actor, agentId: string, selection: ItemSelection, page: Page): Promise<{ items: MemoryItemView[]; total: number }> {
    requireAccess(actor, ACCESS.memory.read);
    await this.agent(actor, agentId);
    const errors = new FieldErrors();
    checkUserId(selection.userId, errors);
    if (selection.sessionId !== undefined && !isId('session', selection.sessionId)) errors.add('session_id', 'is not a session id (ses_…)');
    errors.throwIfAny();
    return this.options.memory.list(actor.tenantId, agentId, selection, page.perPage, page.offset);
  }

  async delete(actor: Actor, id: string, now = new Date()): Promise<void> {
    requireAccess(actor, ACCESS.memory.write);
    const agentId = await this.options.memory.deleteItem(actor.tenantId, id, API_CHANGE, now);
    if (agentId === undefined) throw DomainError.notFound('Memory item');
    await this.forgetVectors([id]);
  }

  /** decisions §14: every item of the agent matching the selection; with user_id, that user's only. */
  async deleteMatching(actor: Actor, agentId: string, selection: ItemSelection, now = new Date()): Promise<number> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, agentId);
    const errors = new FieldErrors();
    checkUserId(selection.userId, errors);
    if (selection.memoryType !== undefined && !hasMemoryType(agent, selection.memoryType)) {
      errors.add('memory_type', `must be one of the agent's memory_types: ${agent.memoryTypes.join(', ')}`);
    }
    errors.throwIfAny();
    const ids = await this.options.bulkDeletes.deleteMatching(actor.tenantId, agent.id, selection, now);
    await this.forgetVectors(ids);
    return ids.length;
  }

  /** Oldest first, kept after the item is deleted; 404 when the tenant never had it. */
  async history(actor: Actor, memoryId: string): Promise<HistoryView[]> {
    requireAccess(actor, ACCESS.memory.read);
    const entries = await this.options.history.history(actor.tenantId, memoryId);
    if (entries.length === 0) throw DomainError.notFound('Memory item');
    return entries;
  }

  /**
   * Embeds, then writes the rows (and whatever `alongside` writes first, which may throw to store
   * nothing: their document, say) in one transaction, then indexes the vectors. An embedder failure
   * stores nothing; an index failure takes the rows (and `documentId`'s document) back out, so
   * nothing is stored that search cannot find.
   */
  async store(
    agent: AgentRecord,
    drafts: readonly MemoryDraft[],
    now: Date,
    change: ChangeSource,
    extra: { documentId?: string; alongside?: () => Promise<void> } = {},
  ): Promise<MemoryItemView[]> {
    const { embedder, em, memory } = this.options;
    const { documentId, alongside } = extra;
    const embeddings = await embedder.embed(drafts.map(embeddedText));
    const items: NewMemoryItem[] = drafts.map((draft, index) => ({
      id: newId('memoryItem'),
      tenantId: agent.tenantId,
      agentId: agent.id,
      ...draft,
      embedding: embeddings[index]!,
      embeddingModel: embedder.model,
      createdAt: now,
    }));
    await em.transactional(async () => {
      await alongside?.();
      await memory.insert(items, change);
    });
    try {
      await this.index(items);
    } catch (error) {
      await em.transactional(async (tx) => {
        await tx.execute(`delete from "memory_items" where "id" in (?)`, [items.map((item) => item.id)], 'run');
        if (documentId) await tx.execute(`delete from "memory_documents" where "id" = ?`, [documentId], 'run');
      });
      throw new DomainError('service_unavailable', 'The vector index is unavailable; nothing was stored.', { cause: error });
    }
    return items.map(({ embedding: _vector, embeddingModel: _model, tenantId: _tenant, documentId: _document, ...view }) => ({ ...view, updatedAt: null }));
  }

  /** Puts stored items' vectors in the index; a failure is the index's `service_unavailable`. */
  async index(items: readonly Pick<NewMemoryItem, 'id' | 'tenantId' | 'agentId' | 'memoryType' | 'userId' | 'embedding'>[]): Promise<void> {
    await this.options.vectors.upsert(
      items.map((item) => ({ id: item.id, tenantId: item.tenantId, agentId: item.agentId, memoryType: item.memoryType, userId: item.userId, vector: item.embedding })),
    );
  }

  /**
   * After a bulk load (a document's chunks), as PostgreSQL advises: until autovacuum gets to it (a
   * minute or more), the planner would think the table small and scan an agent's rows instead of
   * the full-text index. In the background: what was stored stays stored whatever happens here.
   */
  loaded(rows: number): void {
    if (rows < BULK_LOAD_ROWS) return;
    void this.options.em
      .fork()
      .execute(`analyze "memory_items"`, [], 'run')
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not refresh the statistics of memory_items'));
  }

  private async agent(actor: Actor, agentId: string): Promise<AgentRecord> {
    return found(await this.options.agents.find(actor.tenantId, agentId));
  }

  /** Index entries of deleted rows: a failure leaves stale ids, which search ignores and the next start drops. */
  async forgetVectors(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.options.vectors.delete(ids);
    } catch (error) {
      this.options.logger.warn({ err: error, count: ids.length }, 'vectors of deleted memory were not removed; they are ignored and dropped at the next start');
    }
  }
}
