import type { ReactNode } from 'react';

/** The figures that sum something up (an agent's runs, an eval), each its name over its value, as many a row as fit. */
export function Figures({ figures, className }: { figures: readonly (readonly [string, ReactNode])[]; className?: string }) {
  return (
    <dl className={className ? `figures ${className}` : 'figures'}>
      {figures.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
