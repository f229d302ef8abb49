/**
 * Where a cursor-paged list is (decisions §5), kept in the URL: the cursor of the page shown (none:
 * the newest) and the cursors of the pages before it, oldest first, so Previous needs no second
 * request and a page can be linked and reloaded.
 */
export interface CursorPosition {
  cursor?: string;
  back?: string[];
}

/** Previous and Next of a cursor-paged list; `onPage` gets the position to show. Nothing when it is one page. */
export function CursorPager({ cursor, back = [], nextCursor, onPage }: CursorPosition & { nextCursor: string | null; onPage: (position: CursorPosition) => void }) {
  if (!cursor && !nextCursor) return null;
  const previous = () => {
    const previousCursor = back.at(-1);
    onPage(previousCursor ? { cursor: previousCursor, back: back.slice(0, -1) } : {});
  };
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={!cursor} onClick={previous}>
        Previous
      </button>
      <span>Page {back.length + (cursor ? 2 : 1)}</span>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && onPage({ cursor: nextCursor, back: cursor ? [...back, cursor] : [] })}>
        Next
      </button>
    </nav>
  );
}
