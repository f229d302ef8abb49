import { PreparedStatement, type EntityManager, type StatementValue } from '@agent-platform/kit/db';
import type { MemoryType } from '../agents/agents.entity.js';
import { MemoryItem } from './memory.entity.js';
import { DELETED_COLUMNS, MemoryHistoryRepository, RECORD_DELETIONS, RECORD_UPDATE } from './memory-history.repository.js';
import {
  candidateOf,
  foundOf,
  toBytes,
  viewOf,
  type Candidate,
  type CandidateRow,
  type CandidateScope,
  type ChangeSource,
  type FoundItem,
  type FoundRow,
  type ItemSelection,
  type MemoryItemView,
  type NewMemoryItem,
} from './memory-items.js';
import { WordCounts } from './word-counts.js';

// Matches ranked per full-text query, at most. Beyond what a selective word matches, a sample
// this size is as good as a larger one: the vector half and the exact re-scoring do the rest.
const LEXICAL_SCAN_MAX = 200;
// Words of one query counted, at most: a longer query is matched as one of common words.
const COUNTED_WORDS_MAX = 32;
// A longer word is an identifier or a hash that a handful of items hold at most: taken as rare
// without counting, and never remembered (the counts' memory stays small whatever is asked).
const COUNTED_WORD_LENGTH_MAX = 64;

/**
 * What every search statement is confined to: one agent of one tenant, its memory types, one
 * embedding model, and the audience's items (the first of the last two markers is true for every
 * item; else the second names the end user, whose items join the shared ones).
 */
const SCOPE = scopeSql('"agent_id" = ?');
const FILTERED_SCOPE = filteredScopeSql(SCOPE);

function filteredScopeSql(scope: string): string {
  return `${scope} and "metadata" @> ?::jsonb`;
}

function scopeSql(agentCondition: string, modelCondition = '"embedding_model" = ?'): string {
  return `"tenant_id" = ? and ${agentCondition} and "memory_type" = any(string_to_array(?, ',')) and ${modelCondition}
  and (?::boolean or "user_id" is null or "user_id" = ?::text)`;
}
const FOUND_COLUMN_NAMES = ['id', 'agent_id', 'document_id', 'user_id', 'memory_type', 'content', 'metadata', 'created_at', 'updated_at'];
const CANDIDATE_COLUMN_NAMES = [...FOUND_COLUMN_NAMES, 'embedding'];
const FOUND_COLUMNS = FOUND_COLUMN_NAMES.map((name) => `"${name}"`).join(', ');
const CANDIDATE_COLUMNS = CANDIDATE_COLUMN_NAMES.map((name) => `"${name}"`).join(', ');
/** The same, of the row an update names "item" (beside other tables' columns of the same names). */
const QUALIFIED_CANDIDATE_COLUMNS = CANDIDATE_COLUMN_NAMES.map((name) => `"item"."${name}"`).join(', ');

/** The scope's SQL (with a metadata filter when it has one, compared by jsonb containment) and the values of its markers. */
function scopeOf(scope: CandidateScope): { sql: string; values: StatementValue[]; filtered: boolean } {
  const values: StatementValue[] = [
    scope.tenantId,
    scope.agentId,
    scope.memoryTypes.join(','),
    scope.embeddingModel,
    scope.audience === undefined,
    scope.audience?.userId ?? null,
  ];
  if (scope.filter === undefined || Object.keys(scope.filter).length === 0) return { sql: SCOPE, values, filtered: false };
  return { sql: FILTERED_SCOPE, values: [...values, JSON.stringify(scope.filter)], filtered: true };
}

/**
 * A statement over the scope, prepared (planning these cost as much as running them), twice: as
 * is and with the metadata filter; `ownScope` is the scope's SQL when not `SCOPE` itself.
 */
function scoped<Row>(name: string, sql: (scope: string) => string, ownScope = SCOPE): (scope: CandidateScope) => [PreparedStatement<Row>, StatementValue[]] {
  const plain = new PreparedStatement<Row>(name, sql(ownScope));
  const filtered = new PreparedStatement<Row>(`${name}_filtered`, sql(filteredScopeSql(ownScope)));
  return (scope) => {
    const { values, filtered: isFiltered } = scopeOf(scope);
    return [isFiltered ? filtered : plain, values];
  };
}

/**
 * Items holding the words of the first full-text marker, at most LEXICAL_SCAN_MAX of them ranked
 * by the words of the second, best first.
 */
function rankedMatchSql(scope: string): string {
  return `select "id" from (
     select "id", "search_vector", "created_at" from "memory_items"
      where ${scope} and "search_vector" @@ websearch_to_tsquery('simple', ?)
      limit ${LEXICAL_SCAN_MAX}
   ) as "matches"
   order by ts_rank("search_vector", websearch_to_tsquery('simple', ?)) desc, "created_at" desc
   limit ?`;
}

/**
 * Matches of rare words (none in more than LEXICAL_SCAN_MAX of the agent's items), prepared: the
 * full-text index is then always the way in, so the agent's condition is written where no index
 * can serve it: a generic plan would otherwise walk the agent's index wherever agents are many,
 * reading every one of its items for a word a handful hold.
 */
const rareWordMatchStatement = scoped<{ id: string }>('memory_rare_word_matches', rankedMatchSql, scopeSql(`("agent_id" || '') = ?`));

/** How many of one agent's items hold each word, up to one more than a search ranks: one branch per word, each planned with its word. */
function wordCountSql(words: number): string {
  const branch = `select ?::text as "word", (select count(*) from (
      select 1 from "memory_items" where "tenant_id" = ? and "agent_id" = ? and "search_vector" @@ websearch_to_tsquery('simple', ?) limit ${LEXICAL_SCAN_MAX + 1}
    ) as "holders")::int as "count"`;
  return Array.from({ length: words }, () => branch).join('\nunion all ');
}

/** `columns` of the items of the scope among the ids of the last marker (comma-separated). */
function byIdsSql(columns: string): (scope: string) => string {
  return (scope) => `select ${columns} from "memory_items" where ${scope} and "id" = any(string_to_array(?, ','))`;
}

/**
 * The scope's items of other models (comma-separated in the model's marker) holding any word of
 * the first full-text marker, at most LEXICAL_SCAN_MAX of them ranked by the second: what search
 * finds of the items not yet re-embedded.
 */
const otherModelMatches = scoped<FoundRow>(
  'memory_other_model_matches',
  (scope) => `select ${FOUND_COLUMNS} from (
     select ${FOUND_COLUMNS}, "search_vector" from "memory_items"
      where ${scope} and "search_vector" @@ websearch_to_tsquery('simple', ?)
      limit ${LEXICAL_SCAN_MAX}
   ) as "matches"
   order by ts_rank("search_vector", websearch_to_tsquery('simple', ?)) desc, "created_at" desc
   limit ?`,
  scopeSql('"agent_id" = ?', `"embedding_model" = any(string_to_array(?, ','))`),
);

const candidatesById = scoped<CandidateRow>('memory_candidates_by_id', byIdsSql(CANDIDATE_COLUMNS));
// Without the vectors: 40 of them (toasted, sent as hex) were most of a search's read.
const foundById = scoped<FoundRow>('memory_found_by_id', byIdsSql(FOUND_COLUMNS));
const candidatesInScope = scoped<CandidateRow>('memory_candidates_in_scope', (scope) => `select ${CANDIDATE_COLUMNS} from "memory_items" where ${scope}`);
const countInScope = scoped<{ count: string }>('memory_count_in_scope', (scope) => `select count(*) as "count" from "memory_items" where ${scope}`);

/** Items one statement inserts: a few MB of SQL for a document's chunks. */
const INSERT_BATCH_ROWS = 500;

/**
 * Memory items one at a time, and search over them (their history: memory-history.repository.ts;
 * deletions of many: memory-bulk-delete.repository.ts). Every statement is scoped by tenant and agent.
 */
export class MemoryRepository {
  private readonly em: EntityManager;
  private readonly history: MemoryHistoryRepository;
  private readonly wordCounts = new WordCounts();

  constructor(em: EntityManager) {
    this.em = em;
    this.history = new MemoryHistoryRepository(em);
  }

  /**
   * In the caller's transaction: items (a document's chunks, say), each with its ADD in history,
   * INSERT_BATCH_ROWS to a statement. The ORM writes a statement's values into its text: one
   * statement of a 20 MiB text's 26,666 chunks was about 100 MB of SQL, and building it held the
   * service's thread for seconds.
   */
  async insert(items: readonly NewMemoryItem[], change: ChangeSource): Promise<void> {
    for (let from = 0; from < items.length; from += INSERT_BATCH_ROWS) {
      const batch = items.slice(from, from + INSERT_BATCH_ROWS);
      await this.em.insertMany(MemoryItem, batch.map((item) => ({ ...item, embedding: toBytes(item.embedding), updatedAt: null })));
      await this.history.recordAdditions(batch, change);
    }
  }

  /** Newest first; with `userId`, that end user's items only. */
  async list(
    tenantId: string,
    agentId: string,
    selection: ItemSelection,
    limit: number,
    offset: number,
  ): Promise<{ items: MemoryItemView[]; total: number }> {
    const changedBySession = selection.sessionId === undefined ? undefined : await this.history.changedIn(tenantId, agentId, selection.sessionId);
    const where = {
      tenantId,
      agentId,
      ...(selection.memoryType === undefined ? {} : { memoryType: selection.memoryType as MemoryType }),
      ...(selection.userId === undefined ? {} : { userId: selection.userId }),
      ...(changedBySession === undefined ? {} : { id: { $in: changedBySession } }),
    };
    const [items, total] = await this.em.findAndCount(MemoryItem, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items: items.map(viewOf), total };
  }

  async find(tenantId: string, id: string): Promise<Candidate | undefined> {
    const rows = await this.em.execute<CandidateRow[]>(`select ${CANDIDATE_COLUMNS} from "memory_items" where "id" = ? and "tenant_id" = ?`, [id, tenantId], 'all');
    return rows[0] && candidateOf(rows[0]);
  }

  /**
   * The item's new content (with its embedding) and/or metadata, and the UPDATE in its history,
   * in one statement. Undefined when the item is gone (deleted meanwhile).
   */
  async update(
    tenantId: string,
    id: string,
    change: { content?: string; embedding?: Float32Array; embeddingModel?: string; metadata?: Record<string, unknown> },
    source: ChangeSource,
    now: Date,
  ): Promise<MemoryItemView | undefined> {
    // One statement: the row locked as it is, changed, and the change recorded beside it.
    const rows = await this.em.execute<CandidateRow[]>(
      `with "old" as (select "id", "content" from "memory_items" where "id" = ? and "tenant_id" = ? for update),
       "changed" as (
         update "memory_items" as "item" set
           "content" = coalesce(?, "item"."content"), "embedding" = coalesce(?, "item"."embedding"),
           "embedding_model" = coalesce(?, "item"."embedding_model"), "metadata" = coalesce(?::jsonb, "item"."metadata"), "updated_at" = ?
         from "old" where "item"."id" = "old"."id"
         returning ${QUALIFIED_CANDIDATE_COLUMNS}, "item"."tenant_id", "old"."content" as "old_content"
       ),
       "recorded" as (${RECORD_UPDATE})
       select * from "changed"`,
      [
        id,
        tenantId,
        change.content ?? null,
        change.embedding ? toBytes(change.embedding) : null,
        change.embeddingModel ?? null,
        change.metadata ? JSON.stringify(change.metadata) : null,
        now,
        source.source,
        source.sessionId,
        now,
      ],
      'all',
    );
    return rows[0] && viewOf(candidateOf(rows[0]));
  }

  /** The deleted item's agent, or undefined when it was not the tenant's; its DELETE is recorded with it. */
  async deleteItem(tenantId: string, id: string, change: ChangeSource, now: Date): Promise<string | undefined> {
    const rows = await this.em.execute<{ agent_id: string }[]>(
      `with "gone" as (delete from "memory_items" where "id" = ? and "tenant_id" = ? returning ${DELETED_COLUMNS}) ${RECORD_DELETIONS}`,
      [id, tenantId, change.source, change.sessionId, now],
      'all',
    );
    return rows[0]?.agent_id;
  }

  /**
   * Items that hold the query's words, best full-text rank first. Words in more of the agent's
   * items than one search ranks say little about which item is meant: when the query has rarer
   * ones, those alone choose the matches (all of them, then any), through the full-text index,
   * and every word ranks them. A query of common words only is matched by all of them, then by
   * any, at most `LEXICAL_SCAN_MAX` matches ranked: the vector half and the exact re-scoring
   * cover what that sample misses.
   */
  async lexicalMatches(scope: CandidateScope, words: readonly string[], limit: number): Promise<string[]> {
    if (words.length === 0) return [];
    const counts = words.length <= COUNTED_WORDS_MAX ? await this.wordCountsOf(scope, words) : new Map<string, number>();
    const rare = words.filter((word) => (counts.get(word) ?? Infinity) <= LEXICAL_SCAN_MAX);
    const search = async (matching: string): Promise<string[]> =>
      rare.length > 0 ? this.rareWordMatches(scope, matching, words.join(' or '), limit) : this.commonWordMatches(scope, matching, limit);
    const chosen = rare.length > 0 ? rare : words;
    const found = await search(chosen.join(' '));
    if (found.length >= limit || chosen.length === 1) return found;
    const more = await search(chosen.join(' or '));
    return [...new Set([...found, ...more])].slice(0, limit);
  }

  /** Of each word, how many of the agent's items hold it (up to LEXICAL_SCAN_MAX + 1), counted at most once a `WORD_COUNT_TTL_MS`. */
  private async wordCountsOf(scope: CandidateScope, words: readonly string[]): Promise<ReadonlyMap<string, number>> {
    const counted = words.filter((word) => word.length <= COUNTED_WORD_LENGTH_MAX);
    const { known, unknown } = this.wordCounts.lookup(scope.tenantId, scope.agentId, counted);
    for (const word of words) if (word.length > COUNTED_WORD_LENGTH_MAX) known.set(word, 0);
    if (unknown.length === 0) return known;
    const rows = await this.em.execute<{ word: string; count: number }[]>(
      wordCountSql(unknown.length),
      unknown.flatMap((word) => [word, scope.tenantId, scope.agentId, word]),
      'all',
    );
    const fresh = new Map(rows.map((row) => [row.word, Number(row.count)]));
    this.wordCounts.remember(scope.tenantId, scope.agentId, fresh);
    return new Map([...known, ...fresh]);
  }

  /** Items holding the rare words `matching`, ranked by every word of the query (`ranking`): always through the full-text index. */
  private async rareWordMatches(scope: CandidateScope, matching: string, ranking: string, limit: number): Promise<string[]> {
    const [statement, values] = rareWordMatchStatement(scope);
    const rows = await statement.rows(this.em, [...values, matching, ranking, limit]);
    return rows.map((row) => row.id);
  }

  /**
   * Items holding the common words `matching`, ranked by them. Planned at every call, never
   * prepared: whether the full-text index or a plain scan that stops at the limit is cheaper
   * depends on how common the words are, which only the values tell the planner (a generic plan
   * built the index's bitmap of all 100k items for a word in every item: 20 ms, where the scan
   * took 4).
   */
  private async commonWordMatches(scope: CandidateScope, matching: string, limit: number): Promise<string[]> {
    const { sql, values } = scopeOf(scope);
    const rows = await this.em.execute<{ id: string }[]>(rankedMatchSql(sql), [...values, matching, matching, limit], 'all');
    return rows.map((row) => row.id);
  }

  /**
   * Items of the scope stored under `models` (not the scope's: not yet re-embedded) that hold any
   * of `words`, best full-text rank first, without their vectors, which are of another model.
   */
  async otherModelMatches(scope: CandidateScope, models: readonly string[], words: readonly string[], limit: number): Promise<FoundItem[]> {
    if (models.length === 0 || words.length === 0) return [];
    const [statement, values] = otherModelMatches({ ...scope, embeddingModel: models.join(',') });
    const any = words.join(' or ');
    const rows = await statement.rows(this.em, [...values, any, any, limit]);
    return rows.map(foundOf);
  }

  /** The items among `ids` (or, with `ids` undefined, every item) in the scope, vectors included. */
  async candidates(scope: CandidateScope, ids: readonly string[] | undefined): Promise<Candidate[]> {
    if (ids?.length === 0) return [];
    const [statement, values] = ids === undefined ? candidatesInScope(scope) : candidatesById(scope);
    const rows = await statement.rows(this.em, ids === undefined ? values : [...values, ids.join(',')]);
    return rows.map(candidateOf);
  }

  /** The items among `ids` in the scope, without their vectors. */
  async found(scope: CandidateScope, ids: readonly string[]): Promise<FoundItem[]> {
    if (ids.length === 0) return [];
    const [statement, values] = foundById(scope);
    const rows = await statement.rows(this.em, [...values, ids.join(',')]);
    return rows.map(foundOf);
  }

  /** How many items the scope holds: a small filtered set is ranked exactly, without the index. */
  async count(scope: CandidateScope): Promise<number> {
    const [statement, values] = countInScope(scope);
    const [row] = await statement.rows(this.em, values);
    return Number(row?.count ?? 0);
  }

  /**
   * What extraction may change for one owner (an end user, or nobody: the shared items): their
   * semantic items that are not a document's chunks. With `ids`, only those; else all of them,
   * when there are at most `limit` (undefined when there are more).
   */
  async extractable(owner: { tenantId: string; agentId: string; userId: string | null; embeddingModel: string }, ids?: readonly string[], limit = 0): Promise<Candidate[] | undefined> {
    const rows = await this.em.execute<CandidateRow[]>(
      `select ${CANDIDATE_COLUMNS} from "memory_items"
        where "tenant_id" = ? and "agent_id" = ? and "user_id" is not distinct from ?::text and "memory_type" = 'semantic'
          and "document_id" is null and "embedding_model" = ? ${ids === undefined ? 'limit ?' : `and "id" = any(string_to_array(?, ','))`}`,
      [owner.tenantId, owner.agentId, owner.userId, owner.embeddingModel, ids === undefined ? limit + 1 : ids.join(',')],
      'all',
    );
    if (ids === undefined && rows.length > limit) return undefined;
    return rows.map(candidateOf);
  }
}
