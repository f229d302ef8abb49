// The one module that draws graphs: @xyflow/react and its stylesheet load with it, on demand,
// never with the console's first page.
import '@xyflow/react/dist/style.css';
import './workflows.css';
import { BaseEdge, Background, Controls, Handle, MarkerType, Position, ReactFlow, useReactFlow, useStore, type Edge, type EdgeProps, type Node, type NodeChange, type NodeProps } from '@xyflow/react';
import { useEffect, useMemo, useState } from 'react';
import { edgePath, layout, NODE_WIDTH, type DrawnGraph, type DrawnNode, type FieldProblem, type Point } from './graph-model.js';
import { JsonView } from '../../ui/json-view.js';

type StepData = { node: DrawnNode; problems: FieldProblem[]; status: string | undefined };
type StepNode = Node<StepData, 'step'>;

/** A node as drawn: its type above its name (its id), its run status, and what the API said about it. */
function Step({ data }: NodeProps<StepNode>) {
  const { node, problems, status } = data;
  return (
    <div className={problems.length > 0 ? 'wf-step wf-step-invalid' : `wf-step${status ? ` wf-step-${status}` : ''}`} style={{ width: NODE_WIDTH }}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      {/* Its name, read from this text: "approval approve waiting"; the spaces keep the words apart. */}
      <span className="wf-step-type">{node.type}</span> <strong className="wf-step-name">{node.id}</strong> {status ? <span className={`badge badge-${status}`}>{status}</span> : null}
      {problems.length > 0 ? (
        <ul className="wf-step-problems">
          {problems.map((problem) => (
            <li key={`${problem.field}:${problem.message}`}>
              <code>{problem.field}</code> {problem.message}
            </li>
          ))}
        </ul>
      ) : null}
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

type RoutedEdge = Edge<{ waypoints: Point[] }, 'routed'>;

/** An edge drawn through the layers it skips, beside their nodes rather than across them. */
function Routed({ sourceX, sourceY, targetX, targetY, data, markerEnd }: EdgeProps<RoutedEdge>) {
  return <BaseEdge path={edgePath([{ x: sourceX, y: sourceY }, ...(data?.waypoints ?? []), { x: targetX, y: targetY }])} {...(markerEnd ? { markerEnd } : {})} />;
}

const FIT_VIEW_OPTIONS = { padding: 0.15, maxZoom: 1.1 };

/** Fits the drawing again when its box changes size (a phone turned, a window narrowed). */
function FitOnResize() {
  const { fitView } = useReactFlow();
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  useEffect(() => {
    if (width > 0 && height > 0) void fitView(FIT_VIEW_OPTIONS);
  }, [fitView, width, height]);
  return null;
}

const NODE_TYPES = { step: Step };
const EDGE_TYPES = { routed: Routed };

export interface WorkflowGraphProps {
  graph: DrawnGraph;
  /** What the region is called for screen readers, e.g. "Graph of version 2". */
  label: string;
  problems?: Map<number, FieldProblem[]>;
  /** A run's status of each node, by node id (an execution's page). */
  statuses?: Map<string, string>;
}

/**
 * The graph laid out in layers, each node selectable by click or keyboard (Tab to it, Enter or
 * Space; Escape lets go); the selected node's config is shown under the drawing.
 */
const NO_PROBLEMS = new Map<number, FieldProblem[]>();

export function WorkflowGraph({ graph, label, problems = NO_PROBLEMS, statuses }: WorkflowGraphProps) {
  const [chosenKey, setChosenKey] = useState<string | undefined>();
  // Until someone chooses, a node the API refused is shown, so its messages are in view.
  const firstRefused = graph.nodes.find((node) => problems.has(node.index))?.key;
  const selectedKey = chosenKey !== undefined && graph.nodes.some((node) => node.key === chosenKey) ? chosenKey : firstRefused;
  const selected = graph.nodes.find((node) => node.key === selectedKey);

  const placed = useMemo(() => layout(graph, problems), [graph, problems]);
  const nodes: StepNode[] = graph.nodes.map((node) => {
    const nodeProblems = problems.get(node.index) ?? [];
    const status = statuses?.get(node.id);
    return {
      id: node.key,
      type: 'step',
      position: placed.nodes.get(node.key) ?? { x: 0, y: 0 },
      data: { node, problems: nodeProblems, status },
      selected: node.key === selectedKey,
      ariaRole: 'button',
      domAttributes: { 'aria-pressed': node.key === selectedKey, 'aria-invalid': nodeProblems.length > 0 ? true : undefined },
    };
  });
  const edges: RoutedEdge[] = graph.edges.map((edge) => ({
    id: edge.key,
    type: 'routed',
    source: edge.source,
    target: edge.target,
    data: { waypoints: placed.waypoints.get(edge.key) ?? [] },
    markerEnd: { type: MarkerType.ArrowClosed },
    focusable: false,
    selectable: false,
  }));

  const onNodesChange = (changes: NodeChange<StepNode>[]) => {
    const chosen = changes.find((change) => change.type === 'select' && change.selected);
    if (chosen && chosen.type === 'select') setChosenKey(chosen.id);
    else if (changes.some((change) => change.type === 'select' && change.id === selectedKey && !change.selected)) setChosenKey('');
  };

  // The layout is fitted when the drawing mounts: a new shape of graph mounts a new drawing.
  const shape = graph.nodes.map((node) => `${node.key}=${node.id}`).join(',') + '|' + graph.edges.map((edge) => `${edge.source}>${edge.target}`).join(',');
  return (
    <div className="wf-graph-area">
      {graph.nodes.length === 0 ? (
        <p className="muted">This graph has no nodes yet.</p>
      ) : (
        <div className="wf-graph">
          <ReactFlow<StepNode, RoutedEdge>
            key={shape}
            aria-label={label}
            nodes={nodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            edgeTypes={EDGE_TYPES}
            onNodesChange={onNodesChange}
            nodesDraggable={false}
            nodesConnectable={false}
            edgesFocusable={false}
            zoomOnScroll={false}
            preventScrolling={false}
            colorMode="system"
            minZoom={0.2}
            fitView
            fitViewOptions={FIT_VIEW_OPTIONS}
          >
            <FitOnResize />
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        </div>
      )}
      {selected ? <NodeDetails node={selected} problems={problems.get(selected.index) ?? []} /> : graph.nodes.length > 0 ? <p className="muted wf-graph-help">Select a node (click it, or Tab to it and press Enter) to see its config.</p> : null}
    </div>
  );
}

function NodeDetails({ node, problems }: { node: DrawnNode; problems: FieldProblem[] }) {
  return (
    <section className="card wf-node-details" aria-labelledby="wf-node-details-title" aria-live="polite">
      <h2 id="wf-node-details-title">
        Node <code>{node.id}</code> · {node.type}
      </h2>
      {problems.length > 0 ? (
        <ul className="field-error">
          {problems.map((problem) => (
            <li key={`${problem.field}:${problem.message}`}>
              <code>{problem.field}</code>: {problem.message}
            </li>
          ))}
        </ul>
      ) : null}
      <dl className="facts">
        <dt>Position</dt>
        <dd>nodes[{node.index}]</dd>
        {node.retry !== undefined ? (
          <>
            <dt>Retry</dt>
            <dd>
              <code>{JSON.stringify(node.retry)}</code>
            </dd>
          </>
        ) : null}
        {node.onError !== undefined ? (
          <>
            <dt>On error</dt>
            <dd>{typeof node.onError === 'string' ? node.onError : JSON.stringify(node.onError)}</dd>
          </>
        ) : null}
      </dl>
      <JsonView label="Config" value={node.config ?? {}} open />
    </section>
  );
}
