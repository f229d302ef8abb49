import { lazy, Suspense } from 'react';
import { Loading } from '../../ui/feedback.js';
import type { WorkflowGraphProps } from './workflow-graph.js';

// @xyflow/react is fetched the first time a graph is drawn, not with the page that holds it.
const LazyWorkflowGraph = lazy(() => import('./workflow-graph.js').then((module) => ({ default: module.WorkflowGraph })));

export function GraphView(props: WorkflowGraphProps) {
  return (
    <Suspense fallback={<Loading label="Drawing the graph…" />}>
      <LazyWorkflowGraph {...props} />
    </Suspense>
  );
}
