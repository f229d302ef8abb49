import { PreparedStatement, type EntityManager, type StatementValue } from '@agent-platform/kit/db';
import { CANDIDATE_COLUMNS, candidateOf, FOUND_COLUMNS, foundOf, type Candidate, type CandidateRow, type CandidateScope, type FoundItem, type FoundRow } from './memory-items.js';
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

/** The statements of a search over one agent's items (memory.service.ts ranks what they find). */
export class MemorySearchRepository {
  private readonly wordCounts = new WordCounts();

  constructor(private readonly em: EntityManager) {}

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
}
