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
    Node types: <code>webhook</code>, <code>schedule</code>, <code>condition</code>, <code>agent</code>, <code>integration</code>, <code>approval</code>, <code>wait</code>. Every node may add <code>retry</code> and <code>on_error</code>.
  </>
);
