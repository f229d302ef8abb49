import type { MemoryItem } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { DataTable } from '../../ui/data-table.js';
import { EXACT_LINK } from '../../ui/links.js';
import { Time } from '../../ui/page.js';
import { metadataValue, type Metadata } from './memory-input.js';
import type { MemorySearch } from './memory-search.js';

/** An item as the list or a search shows it: a search result has a score and no updated_at. */
export type ShownItem = Pick<MemoryItem, 'id' | 'content' | 'memory_type' | 'metadata' | 'user_id' | 'created_at'> & { updated_at?: string | null; score?: number };

/** Items in a table; each item's content opens its detail and history (`item` in the address). */
export function ItemsTable({ items, search, caption, scored = false }: { items: ShownItem[]; search: MemorySearch; caption: string; scored?: boolean }) {
  return (
    <DataTable
      caption={caption}
      className="memory-items"
      rows={items}
      rowKey={(item) => item.id}
      selected={(item) => item.id === search.item}
      columns={[
        {
          header: 'Content',
          className: 'memory-content',
          cell: (item) => (
            <Link to="/memory" search={{ ...search, item: item.id }} {...EXACT_LINK}>
              {item.content}
            </Link>
          ),
        },
        scored && { header: 'Score', className: 'memory-score', cell: (item) => (item.score === undefined ? '—' : formatScore(item.score)) },
        { header: 'Type', cell: (item) => item.memory_type },
        { header: 'End user', cell: (item) => item.user_id ?? <span className="muted">shared</span> },
        { header: 'Metadata', cell: (item) => <MetadataList metadata={item.metadata} /> },
        { header: 'Created', cell: (item) => <Time value={item.created_at} /> },
      ]}
    />
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
