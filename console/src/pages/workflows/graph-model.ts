import { describeError } from '../../api/call.js';

/**
 * A node as the console draws it. Drafts being edited may be anything JSON allows, so every field
 * is read defensively: the API, not the console, says what is wrong with them.
 */
export interface DrawnNode {
  /** Its position in `nodes`: what the API's field paths (`nodes[2].config.url`) name. */
  index: number;
  /** Unique among drawn nodes even when the draft repeats an id. */
  key: string;
  id: string;
  type: string;
  config: unknown;
  retry: unknown;
  onError: unknown;
}

export interface DrawnEdge {
  key: string;
  source: string;
  target: string;
}

export interface DrawnGraph {
  nodes: DrawnNode[];
  edges: DrawnEdge[];
}

export interface FieldProblem {
  field: string;
  message: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The drawable part of `{ nodes, edges }`, whatever shape a draft has. */
export function drawnGraph(nodes: unknown, edges: unknown): DrawnGraph {
  const drawn: DrawnNode[] = (Array.isArray(nodes) ? nodes : []).map((node: unknown, index) => {
    const record = isRecord(node) ? node : {};
    return {
      index,
      key: `node-${index}`,
      id: typeof record.id === 'string' && record.id !== '' ? record.id : `node ${index + 1}`,
      type: typeof record.type === 'string' ? record.type : 'unknown',
      config: record.config,
      retry: record.retry,
      onError: record.on_error,
    };
  });
  // An edge joins the first node holding each id; edges naming no node are left out of the drawing.
  const keyOf = new Map<string, string>();
  for (const node of drawn) if (!keyOf.has(node.id)) keyOf.set(node.id, node.key);
  const drawnEdges: DrawnEdge[] = [];
  (Array.isArray(edges) ? edges : []).forEach((edge: unknown, index) => {
    if (!isRecord(edge)) return;
    const source = typeof edge.source === 'string' ? keyOf.get(edge.source) : undefined;
    const target = typeof edge.target === 'string' ? keyOf.get(edge.target) : undefined;
    if (source && target) drawnEdges.push({ key: `edge-${index}`, source, target });
  });
  return { nodes: drawn, edges: drawnEdges };
}

/**
 * Longest-path layering: a node sits one layer below the deepest of its predecessors, so every
 * edge points downwards. Relaxation stops after as many rounds as there are nodes, which also
 * bounds a draft with a cycle (the API will refuse it; it is still drawn).
 */
export function layers(graph: DrawnGraph): Map<string, number> {
  const layer = new Map(graph.nodes.map((node) => [node.key, 0]));
  for (let round = 0; round < graph.nodes.length; round++) {
    let changed = false;
    for (const edge of graph.edges) {
      const next = (layer.get(edge.source) ?? 0) + 1;
      if (edge.source !== edge.target && next > (layer.get(edge.target) ?? 0) && next < graph.nodes.length) {
        layer.set(edge.target, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return layer;
}

export const NODE_WIDTH = 200;
/** The room an edge takes where it passes through a layer it skips. */
const PASS_WIDTH = 24;
const COLUMN_GAP = 40;
const ROW_GAP = 70;
const NODE_BASE_HEIGHT = 64;
const PROBLEM_LINE_HEIGHT = 40;

export interface Point {
  x: number;
  y: number;
}

export interface GraphLayout {
  /** Each node's top-left corner, by key. */
  nodes: Map<string, Point>;
  /** Where each edge that skips layers passes them (top and bottom of each), by edge key. */
  waypoints: Map<string, Point[]>;
}

type Slot = { kind: 'node'; key: string; index: number } | { kind: 'pass'; edgeKey: string; index: number };

const slotId = (slot: Slot) => (slot.kind === 'node' ? slot.key : `${slot.edgeKey}@pass`);

/**
 * A layered drawing (after Sugiyama, kept simple): longest-path layers from the top; an edge that
 * skips layers takes a narrow slot in each so it runs beside the nodes, not through them; each
 * layer is ordered by the mean position of what feeds it (fewer crossings) and centred. A layer
 * is as tall as its tallest node (problems listed on a node make it taller).
 */
export function layout(graph: DrawnGraph, problemsByIndex: Map<number, FieldProblem[]>): GraphLayout {
  const layerOf = layers(graph);
  const rows: Slot[][] = [];
  const addSlot = (layer: number, slot: Slot) => (rows[layer] ??= []).push(slot);
  graph.nodes.forEach((node, index) => addSlot(layerOf.get(node.key) ?? 0, { kind: 'node', key: node.key, index }));
  // For each slot, the slots one layer up that lead into it: what orders it.
  const upstream = new Map<string, string[]>();
  const feed = (to: string, from: string) => upstream.set(to, [...(upstream.get(to) ?? []), from]);
  const passLayers = new Map<string, number[]>();
  graph.edges.forEach((edge, index) => {
    const from = layerOf.get(edge.source) ?? 0;
    const to = layerOf.get(edge.target) ?? 0;
    if (to <= from) return; // a cycle in a draft: drawn as it comes
    let previous = edge.source;
    const crossed: number[] = [];
    for (let layer = from + 1; layer < to; layer++) {
      const slot: Slot = { kind: 'pass', edgeKey: `${edge.key}#${layer}`, index: graph.nodes.length + index };
      addSlot(layer, slot);
      feed(slotId(slot), previous);
      previous = slotId(slot);
      crossed.push(layer);
    }
    feed(edge.target, previous);
    passLayers.set(edge.key, crossed);
  });

  const column = new Map<string, number>();
  const nodes = new Map<string, Point>();
  const passes = new Map<string, Point[]>();
  let top = 0;
  rows.forEach((row = [], layer) => {
    const barycentre = (slot: Slot) => {
      const above = (upstream.get(slotId(slot)) ?? []).map((id) => column.get(id)).filter((value) => value !== undefined);
      return above.length > 0 ? above.reduce((sum, value) => sum + value, 0) / above.length : Number.POSITIVE_INFINITY;
    };
    const ordered = layer === 0 ? row : [...row].sort((a, b) => barycentre(a) - barycentre(b) || a.index - b.index);
    const widths = ordered.map((slot) => (slot.kind === 'node' ? NODE_WIDTH : PASS_WIDTH));
    let x = -(widths.reduce((sum, width) => sum + width, 0) + (ordered.length - 1) * COLUMN_GAP) / 2;
    let height = NODE_BASE_HEIGHT;
    const passX = new Map<string, number>();
    ordered.forEach((slot, position) => {
      column.set(slotId(slot), position);
      if (slot.kind === 'node') {
        nodes.set(slot.key, { x, y: top });
        height = Math.max(height, NODE_BASE_HEIGHT + (problemsByIndex.get(slot.index)?.length ?? 0) * PROBLEM_LINE_HEIGHT);
      } else {
        passX.set(slot.edgeKey, x + PASS_WIDTH / 2);
      }
      x += (widths[position] ?? 0) + COLUMN_GAP;
    });
    for (const [edgeKey, centre] of passX) passes.set(edgeKey, [{ x: centre, y: top }, { x: centre, y: top + height }]);
    top += height + ROW_GAP;
  });

  const waypoints = new Map<string, Point[]>();
  for (const [edgeKey, crossed] of passLayers) waypoints.set(edgeKey, crossed.flatMap((layer) => passes.get(`${edgeKey}#${layer}`) ?? []));
  return { nodes, waypoints };
}

/** An edge's path through its waypoints: vertical S-curves between layers, straight within one. */
export function edgePath(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  let path = `M ${first.x},${first.y}`;
  let previous = first;
  for (const point of rest) {
    const middle = (previous.y + point.y) / 2;
    path += previous.x === point.x ? ` L ${point.x},${point.y}` : ` C ${previous.x},${middle} ${point.x},${middle} ${point.x},${point.y}`;
    previous = point;
  }
  return path;
}

const NODE_FIELD = /^nodes\[(\d+)\](?:\.(.*))?$/;

/**
 * The API's field problems (decisions §2: `nodes[2].config.url`) by the index of the node they
 * name; the path under the node is kept (`config.url`), or `node` for the node as a whole.
 */
export function problemsByNode(error: unknown): Map<number, FieldProblem[]> {
  const byIndex = new Map<number, FieldProblem[]>();
  if (!error) return byIndex;
  for (const { field, message } of describeError(error).fields) {
    const match = NODE_FIELD.exec(field);
    if (!match) continue;
    const index = Number(match[1]);
    const list = byIndex.get(index) ?? [];
    list.push({ field: match[2] ?? 'node', message });
    byIndex.set(index, list);
  }
  return byIndex;
}
