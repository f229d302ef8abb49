import { WORKFLOW_NODE_TYPES } from '@agent-platform/client';
import { Fragment } from 'react';

/** A small graph that runs with nothing outside the platform: a condition, an approval, an end. */
export const EXAMPLE_GRAPH = {
  nodes: [
    { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'approve' }, { else: 'done' }] } },
    { id: 'approve', type: 'approval', config: { message: 'Refund {{ input.amount }} EUR?', timeout_seconds: 86400 } },
    { id: 'done', type: 'condition', config: { rules: [] } },
  ],
  edges: [
    { source: 'check', target: 'approve' },
    { source: 'check', target: 'done' },
    { source: 'approve', target: 'done' },
  ],
};

export const GRAPH_HINT = (
  <>
    Node types:{' '}
    {WORKFLOW_NODE_TYPES.map((type, index) => (
      <Fragment key={type}>
        {index > 0 ? ', ' : null}
        <code>{type}</code>
      </Fragment>
    ))}
    . Every node may add <code>retry</code> and <code>on_error</code>.
  </>
);
