import type { ReactNode } from 'react';
import { PagedTable } from './data-table.js';
import { ErrorNotice } from './feedback.js';
import { Time } from './page.js';

/** What the versions lists of workflows (decisions §13.1) and agents (§16) show of a version. */
export interface VersionSummary {
  version: number;
  created_at: string;
  /** Null for an agent's version 1 made before versions were kept. */
  created_by: string | null;
}

/**
 * A versioned thing's versions, a page at a time: each with the link that views it (`viewLink`,
 * reading "Version N"), the current one marked, any other with `restoreAction`, and what the last
 * restore did or why it could not.
 */
export function VersionsList<Item extends VersionSummary>({
  query,
  page,
  perPage,
  onPage,
  current,
  viewed,
  viewLink,
  restoreAction,
  restore,
}: {
  query: { isPending: boolean; error: unknown; data: { items: Item[]; total: number } | undefined; refetch: () => unknown };
  page: number;
  perPage: number;
  onPage: (page: number) => void;
  current: number;
  viewed: number | undefined;
  viewLink: (version: number) => ReactNode;
  restoreAction: (version: number) => ReactNode;
  restore: { error: unknown; variables: number | undefined; data: { version: number } | undefined };
}) {
  return (
    <>
      <ErrorNotice error={restore.error} title="Could not restore the version" />
      {restore.data ? (
        <p className="notice notice-info" role="status">
          Restored version {restore.variables} as version {restore.data.version}.
        </p>
      ) : null}
      <PagedTable
        query={query}
        loadingLabel="Loading versions…"
        page={page}
        perPage={perPage}
        onPage={onPage}
        label="Version list"
        columns={[
          {
            header: 'Version',
            cell: (item) => (
              <>
                {viewLink(item.version)} {item.version === current ? <span className="badge badge-active">current</span> : null}
              </>
            ),
          },
          { header: 'Made', cell: (item) => <Time value={item.created_at} /> },
          { header: 'By', cell: (item) => (item.created_by ? <code>{item.created_by}</code> : <span className="muted">—</span>) },
          { header: 'Actions', headerHidden: true, cell: (item) => (item.version === current ? null : restoreAction(item.version)) },
        ]}
        rowKey={(item) => item.version}
        selected={(item) => item.version === viewed}
      />
    </>
  );
}
