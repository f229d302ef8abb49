import './settings.css';
import type { ReactNode } from 'react';

/**
 * A table that scrolls sideways on narrow screens, reachable by keyboard to scroll it (a
 * focusable, named region), as axe's scrollable-region-focusable asks.
 */
export function ScrollTable({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll scroll-table" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
