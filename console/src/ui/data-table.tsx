import { useId, type Key, type ReactNode } from 'react';
import { QueryState } from './feedback.js';
import { Pager } from './page.js';

export interface Column<Row> {
  header: ReactNode;
  /** What labels its cells where a phone stacks each row (the header, when that is text). */
  label?: string;
  /** A header only screen readers read (an actions column): the column is named, but shows no title. */
  headerHidden?: boolean;
  cell: (row: Row) => ReactNode;
  /** The class of each of its cells, or of one row's cell. */
  className?: string | ((row: Row) => string | undefined);
}

/** The name of the table's scrolling region: its own label, or its caption. */
type Naming = { label: string; caption?: ReactNode } | { label?: undefined; caption: ReactNode };

interface TableOptions<Row> {
  /** The caption for screen readers only, when what the table shows is said around it. */
  captionHidden?: boolean;
  /** Columns in order; `false` leaves one out (`scored && { … }`). */
  columns: readonly (Column<Row> | false | undefined)[];
  rowKey: (row: Row, index: number) => Key;
  /** The row whose detail is open, highlighted (its link says it is the current one). */
  selected?: (row: Row) => boolean;
  className?: string;
  /** What an empty list shows instead (`Empty`, saying what to do about it). */
  empty?: ReactNode;
}

/**
 * A list as a table, one column list driving the header and every row. On a phone each row is
 * stacked into a card of labelled values (styles.css, `.stacked`), so no column is cut off the
 * side; explicit roles keep it a table for screen readers once CSS makes it blocks. Wider, it
 * scrolls sideways in a named region that takes the focus, so a keyboard can scroll it (axe's
 * scrollable-region-focusable).
 */
export function DataTable<Row>({ label, caption, captionHidden = false, columns, rows, rowKey, selected, className, empty }: Naming & TableOptions<Row> & { rows: readonly Row[] }) {
  const captionId = useId();
  const shown = columns.filter((column): column is Column<Row> => Boolean(column));
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <div className="table-scroll" role="region" tabIndex={0} {...(label === undefined ? { 'aria-labelledby': captionId } : { 'aria-label': label })}>
      <table role="table" className={className ? `stacked ${className}` : 'stacked'}>
        {caption === undefined ? null : (
          <caption id={captionId} className={captionHidden ? 'visually-hidden' : undefined}>
            {caption}
          </caption>
        )}
        <thead role="rowgroup">
          <tr role="row">
            {shown.map((column, index) => (
              <th key={index} scope="col" role="columnheader">
                {column.headerHidden ? <span className="visually-hidden">{column.header}</span> : column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role="rowgroup">
          {rows.map((row, rowIndex) => (
            <tr key={rowKey(row, rowIndex)} role="row" className={selected?.(row) ? 'selected' : undefined}>
              {shown.map((column, index) => (
                <td key={index} role="cell" data-label={labelOf(column)} className={typeof column.className === 'function' ? column.className(row) : column.className}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A stacked cell's label: the column's own, else its header when that is text; none for a hidden header. */
function labelOf<Row>(column: Column<Row>): string | undefined {
  if (column.headerHidden) return undefined;
  return column.label ?? (typeof column.header === 'string' ? column.header : undefined);
}

/**
 * A `page` / `per_page` list as the API answers it (`items`, `total`): loading, its error, the
 * table (or what an empty list says) and its pager.
 */
export function PagedTable<Row>({
  query,
  loadingLabel,
  page,
  perPage,
  onPage,
  ...table
}: Naming &
  TableOptions<Row> & {
    query: { isPending: boolean; error: unknown; data: { items: Row[]; total: number } | undefined; refetch: () => unknown };
    loadingLabel: string;
    page: number;
    perPage: number;
    onPage: (page: number) => void;
  }) {
  return (
    <QueryState query={query} loadingLabel={loadingLabel}>
      {(list) => (
        <>
          <DataTable {...table} rows={list.items} />
          <Pager page={page} perPage={perPage} total={list.total} onPage={onPage} />
        </>
      )}
    </QueryState>
  );
}
