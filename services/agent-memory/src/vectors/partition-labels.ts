/**
 * The partition label of an item in the embedded index, which the arena counts and filters by:
 * the memory type alone for a shared item, and the memory type, U+0000 and the user id for an end
 * user's item (decisions §14). Rows files saved before end users hold bare memory types as
 * labels, so they load as shared items unchanged. Memory types never contain U+0000 (nor do user
 * ids hold control characters), so the first U+0000 splits a label unambiguously.
 */
import { type VectorQuery } from './vector-store.js';

const SEPARATOR = '\u0000';

/** What narrows a search within one agent. */
export type PartitionFilter = Pick<VectorQuery, 'memoryTypes' | 'audience'>;

export function partitionLabel(memoryType: string, userId: string | null): string {
  return userId === null ? memoryType : `${memoryType}${SEPARATOR}${userId}`;
}

export function labelParts(label: string): { memoryType: string; userId: string | null } {
  const at = label.indexOf(SEPARATOR);
  return at < 0 ? { memoryType: label, userId: null } : { memoryType: label.slice(0, at), userId: label.slice(at + 1) };
}

/**
 * The labels a search wants, or undefined when it wants every item. `stored` (the labels the
 * index holds) is read only when the filter cannot spell its labels out itself: without memory
 * types, or without an audience (every user's labels of the wanted types).
 */
export function wantedLabels(stored: Iterable<string>, filter: PartitionFilter): ReadonlySet<string> | undefined {
  const { memoryTypes, audience } = filter;
  if (!memoryTypes && !audience) return undefined;
  if (memoryTypes && audience) {
    // The chat path: a handful of labels, whatever the number of end users.
    const labels = new Set(memoryTypes);
    if (audience.userId !== null) for (const type of memoryTypes) labels.add(partitionLabel(type, audience.userId));
    return labels;
  }
  const types = memoryTypes ? new Set(memoryTypes) : undefined;
  const labels = new Set<string>();
  for (const label of stored) {
    const { memoryType, userId } = labelParts(label);
    if (types && !types.has(memoryType)) continue;
    if (audience && userId !== null && userId !== audience.userId) continue;
    labels.add(label);
  }
  return labels;
}
