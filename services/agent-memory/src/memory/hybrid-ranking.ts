import { stemmer } from 'stemmer';
import { STOP_WORDS } from '../models/hashing-embedder.js';
import { embeddedText } from './embedded-text.js';
import type { FoundItem, MemoryItemView } from './memory-items.js';

/**
 * Hybrid ranking: a convex combination of the vector similarity and the share of the query's
 * words the item contains. Both parts lie in [0, 1], so the score does too, and the list is sorted
 * by the very number a client sees and thresholds with `min_score`. Reciprocal rank fusion ranks
 * as well but yields rank-based numbers with no meaning as a relevance, and min_score on them
 * would mean nothing; a normalised convex combination is as good or better at ranking
 * (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2023).
 */
export const VECTOR_WEIGHT = 0.6;
export const LEXICAL_WEIGHT = 1 - VECTOR_WEIGHT;

/** An item and its score; a chat turn's memories, as its rounds keep them, are views without a document. */
export interface Ranked<Item extends MemoryItemView = FoundItem> {
  candidate: Item;
  score: number;
}

/** An item to rank, with its cosine similarity to the query. */
export interface Scored {
  candidate: FoundItem;
  similarity: number;
}

/** Lower-cased words and numbers: the units lexical matching counts. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The query's meaningful words for full-text matching (websearch_to_tsquery takes `a b c` as all
 * of them and `a or b or c` as any). Function words would match nearly every item for nothing.
 */
export function fullTextWords(query: string): string[] {
  // "or" would be read as the operator itself; it carries no meaning worth matching.
  const every = [...new Set(words(query))].filter((word) => word !== 'or');
  const meaningful = every.filter((word) => !STOP_WORDS.has(word));
  return meaningful.length > 0 ? meaningful : every;
}

/**
 * A lower-cased word's stem (Porter's: moved, moving, moves → move; batteries → batteri), so the
 * lexical half is not defeated by inflection: "Where did I move?" finds "I moved to Porto."
 * Words with digits are ids and codes, kept as they are.
 */
export function stem(word: string): string {
  return /\p{N}/u.test(word) ? word : stemmer(word);
}

/**
 * The words of a query that say what it is about: function words ("how", "is", "the") match
 * nearly everything and would reward the wrong items, so they count only when a query has nothing else.
 */
export function meaningfulWords(query: string): Set<string> {
  const all = words(query);
  const meaningful = all.filter((word) => !STOP_WORDS.has(word));
  return new Set((meaningful.length > 0 ? meaningful : all).map(stem));
}

/** Share of the query's meaningful words (stems) found in the text, in [0, 1]. */
export function coverage(queryStems: ReadonlySet<string>, text: string): number {
  return coverageOf(queryStems)(text);
}

/**
 * `coverage` for one query over many texts. Rather than split and stem every text's words, each
 * query stem has an expression that finds the whole words that begin as its forms do (the stem
 * without the final i or e Porter may have put there: happi ← happy, conflate ← conflating), and
 * `stem` confirms the form: the first confirmed form settles the stem, so a word every sentence
 * repeats costs one match, not one per sentence, and a form's verdict is kept for the query's
 * other texts. Over a search's candidates: 3× faster than one expression for all the words, whose
 * every match was an array to collect (a third of what a search allocated), and the same answer.
 * The expressions ignore case rather than each text being lower-cased first: a quarter faster
 * again over 40 of the bench's chunks, and no copy of every candidate's text (a search over 12.5k
 * items allocated 278 kB, now 251). Stems cost 1.4× the plural folding they replaced (30 µs for
 * 40 chunks of 1 kB, against 22).
 */
export function coverageOf(queryStems: ReadonlySet<string>): (text: string) => number {
  if (queryStems.size === 0) return () => 0;
  // Stems are letters and digits only (see `words`): nothing in them needs escaping.
  const finders = [...queryStems].map((queryStem) => {
    // A word with digits is an id, matched as it is; a stem, by the forms Porter could fold onto it.
    const start = /\p{N}/u.test(queryStem) || queryStem.length === 1 ? queryStem : queryStem.replace(/[ie]$/, '');
    const wholeForms = new RegExp(`(?<![\\p{L}\\p{N}])${start}[\\p{L}\\p{N}]*`, 'giu');
    // A form's verdict, kept for this query's texts: candidates repeat the same words.
    const verdicts = new Map<string, boolean>();
    const isForm = (form: string): boolean => {
      let verdict = verdicts.get(form);
      if (verdict === undefined) {
        verdict = stem(form.toLowerCase()) === queryStem;
        verdicts.set(form, verdict);
      }
      return verdict;
    };
    return { wholeForms, isForm };
  });
  return (text) => {
    let found = 0;
    for (const { wholeForms, isForm } of finders) {
      wholeForms.lastIndex = 0;
      for (let match = wholeForms.exec(text); match; match = wholeForms.exec(text)) {
        if (!isForm(match[0])) continue;
        found += 1;
        break;
      }
    }
    return found / finders.length;
  };
}

/** Best first (ties: newest first), scores in [0, 1], at most `limit`, none below `minScore`. */
export function rank(query: string, candidates: readonly Scored[], options: { limit: number; minScore: number }): Ranked[] {
  const coverageOfQuery = coverageOf(meaningfulWords(query));
  return candidates
    .map(({ candidate, similarity }) => {
      const score = VECTOR_WEIGHT * Math.max(0, Math.min(1, similarity)) + LEXICAL_WEIGHT * coverageOfQuery(embeddedText(candidate));
      return { candidate, score: Math.round(score * 1e6) / 1e6 };
    })
    .filter((ranked) => ranked.score >= options.minScore)
    .sort((a, b) => b.score - a.score || b.candidate.createdAt.getTime() - a.candidate.createdAt.getTime() || (a.candidate.id < b.candidate.id ? 1 : -1))
    .slice(0, options.limit);
}
