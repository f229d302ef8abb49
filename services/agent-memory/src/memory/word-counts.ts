/**
 * How many of an agent's items hold each word, as last counted, up to a cap: the full-text half
 * of search filters on the words a search can rank every holder of and leaves the commoner ones
 * to the ranking. A count is an estimate kept `WORD_COUNT_TTL_MS`: it steers which words filter,
 * never what a word matches, so a stale one costs a slower or narrower lexical half for a while,
 * never a wrong answer. Bounded: the oldest counts make room for new ones.
 */
export const WORD_COUNT_TTL_MS = 60_000;
export const WORD_COUNTS_MAX = 20_000;

export class WordCounts {
  private readonly counts = new Map<string, { count: number; expires: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The counts known for `words` of one agent, and the words not known (or expired). */
  lookup(tenantId: string, agentId: string, words: readonly string[]): { known: Map<string, number>; unknown: string[] } {
    const known = new Map<string, number>();
    const unknown: string[] = [];
    const now = this.now();
    for (const word of words) {
      const entry = this.counts.get(keyOf(tenantId, agentId, word));
      if (entry && entry.expires > now) known.set(word, entry.count);
      else unknown.push(word);
    }
    return { known, unknown };
  }

  remember(tenantId: string, agentId: string, counts: ReadonlyMap<string, number>): void {
    const expires = this.now() + WORD_COUNT_TTL_MS;
    for (const [word, count] of counts) {
      const key = keyOf(tenantId, agentId, word);
      // Re-inserted at the end, so the map's order stays oldest first for eviction.
      this.counts.delete(key);
      this.counts.set(key, { count, expires });
    }
    for (const key of this.counts.keys()) {
      if (this.counts.size <= WORD_COUNTS_MAX) break;
      this.counts.delete(key);
    }
  }
}

function keyOf(tenantId: string, agentId: string, word: string): string {
  return `${tenantId}\u0000${agentId}\u0000${word}`;
}
