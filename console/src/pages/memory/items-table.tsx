import type { MemoryItem } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { Time } from '../../ui/page.js';
import { metadataValue, type Metadata } from './memory-input.js';
import type { MemorySearch } from './routes.js';

/**
 * For links within the memory page, which differ only in their search: the router would call a
 * link active (class and aria-current) whenever its search is part of the current one, so every
 * link to the same agent would be; only a link to exactly this view is.
 */
export const EXACT_LINK = { activeOptions: { exact: true }, activeProps: {} } as const;

/** An item as the list or a search shows it: a search result has a score and no updated_at. */
export type ShownItem = Pick<MemoryItem, 'id' | 'content' | 'memory_type' | 'metadata' | 'user_id' | 'created_at'> & { updated_at?: string | null; score?: number };

/** Items in a table; each item's content opens its detail and history (`item` in the address). */
export function ItemsTable({ items, search, caption, scored = false }: { items: ShownItem[]; search: MemorySearch; caption: string; scored?: boolean }) {
  return (
    <div className="table-scroll">
      <table className="memory-items">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Content</th>
            {scored ? <th scope="col">Score</th> : null}
            <th scope="col">Type</th>
            <th scope="col">End user</th>
            <th scope="col">Metadata</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.id} className={item.id === search.item ? 'memory-selected' : undefined}>
              <td className="memory-content">
                <Link to="/memory" search={{ ...search, item: item.id }} {...EXACT_LINK}>
                  {item.content}
                </Link>
              </td>
              {scored ? <td className="memory-score">{item.score === undefined ? '—' : formatScore(item.score)}</td> : null}
              <td>{item.memory_type}</td>
              <td>{item.user_id ?? <span className="muted">shared</span>}</td>
              <td>
                <MetadataList metadata={item.metadata} />
              </td>
              <td>
                <Time value={item.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A score in [0, 1] to three places: enough to tell close matches apart. */
export function formatScore(score: number): string {
  return score.toFixed(3);
}

/** Each metadata key with its value, or a quiet "none". */
export function MetadataList({ metadata }: { metadata: Metadata }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="memory-metadata">
      {entries.map(([key, value]) => (
        <li key={key}>
          <code>{key}</code>: {metadataValue(value)}
        </li>
      ))}
    </ul>
  );
}
