import type { FieldErrors } from '@agent-platform/kit';
import { kindOf, NODE_KINDS, type TypedNode } from '../nodes/node-kinds.js';
import { isObject, type ConfigContext } from './graph-fields.js';
import {
  MAX_ATTEMPTS,
  MAX_BACKOFF_SECONDS,
  MAX_EDGES,
  MAX_NODES,
  NODE_TYPES,
  ON_ERROR,
  type NodePolicy,
  type OnError,
  type NodeType,
  type ScheduleConfig,
  type TriggerType,
  type WorkflowEdge,
  type WorkflowGraph,
  type WorkflowNode,
} from './graph-types.js';

export * from './graph-types.js';

const NODE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** A node that passed the first look: a usable id and type, its config not yet read. */
interface NodeHead {
  index: number;
  id: string;
  type: NodeType;
  config: Record<string, unknown>;
  policy: NodePolicy;
}

/**
 * Checks a graph against decisions §7, adding every problem to `errors` with its path. The graph
 * returned holds what could be read; it is only whole when no error was added.
 */
export function checkGraph(nodes: unknown, edges: unknown, errors: FieldErrors): WorkflowGraph {
  const graph: WorkflowGraph = { nodes: [], edges: [] };
  if (!Array.isArray(nodes)) {
    errors.add('nodes', 'must be an array');
    return graph;
  }
  if (nodes.length > MAX_NODES) {
    errors.add('nodes', `must hold at most ${MAX_NODES} nodes, not ${nodes.length}`);
    return graph;
  }
  const heads = checkNodeHeads(nodes, errors);
  const nodeIds = new Set(heads.map((head) => head.id));
  const triggerIds = new Set(heads.filter((head) => isTriggerType(head.type)).map((head) => head.id));
  for (const head of heads) {
    const ctx: ConfigContext = { path: `nodes[${head.index}].config`, nodeId: head.id, nodeIds, triggerIds, errors };
    const config = NODE_KINDS[head.type].check(head.config, ctx);
    graph.nodes.push({ id: head.id, type: head.type, config, ...head.policy } as WorkflowNode);
  }
  graph.edges = checkEdges(edges, nodeIds, triggerIds, errors);
  const cycle = findCycle(graph);
  if (cycle) errors.add('edges', `must not form a cycle (condition targets count as edges): ${cycle.join(' → ')}`);
  return graph;
}

function isTriggerType(type: NodeType): boolean {
  return NODE_KINDS[type].trigger;
}

/** Ids, types, config objects; one trigger at most. Duplicates are reported and left out. */
function checkNodeHeads(nodes: unknown[], errors: FieldErrors): NodeHead[] {
  const heads: NodeHead[] = [];
  const firstIndex = new Map<string, number>();
  let trigger: number | undefined;
  nodes.forEach((node, index) => {
    const path = `nodes[${index}]`;
    if (!isObject(node)) {
      errors.add(path, 'must be an object with id, type and config');
      return;
    }
    // decisions §1: unknown fields are ignored (an editor's `position`, say); only id, type, config
    // and the failure policy (§13) are kept.
    let id: string | undefined;
    if (typeof node.id !== 'string' || !NODE_ID.test(node.id)) {
      errors.add(`${path}.id`, 'must be 1 to 100 characters of A-Z, a-z, 0-9, _ and -');
    } else if (firstIndex.has(node.id)) {
      errors.add(`${path}.id`, `duplicates the id of nodes[${firstIndex.get(node.id)}]`);
    } else {
      id = node.id;
      firstIndex.set(id, index);
    }
    const type = node.type;
    const known = typeof type === 'string' && (NODE_TYPES as readonly string[]).includes(type) ? (type as NodeType) : undefined;
    if (!known) errors.add(`${path}.type`, `must be one of ${NODE_TYPES.join(', ')}`);
    else if (isTriggerType(known)) {
      if (trigger === undefined) trigger = index;
      else errors.add(`${path}.type`, `is a second trigger node; a workflow has at most one and nodes[${trigger}] is it`);
    }
    const config = node.config ?? {};
    if (!isObject(config)) errors.add(`${path}.config`, 'must be an object');
    const policy = checkPolicy(node, path, errors);
    if (id !== undefined && known && isObject(config)) heads.push({ index, id, type: known, config, policy });
  });
  return heads;
}

/** decisions §13: `retry` ({max_attempts 1–10, backoff_seconds}) and `on_error` (fail | continue). */
function checkPolicy(node: Record<string, unknown>, path: string, errors: FieldErrors): NodePolicy {
  const policy: NodePolicy = {};
  const onError = node.on_error;
  if (onError !== undefined && onError !== null) {
    if (typeof onError === 'string' && (ON_ERROR as readonly string[]).includes(onError)) policy.on_error = onError as OnError;
    else errors.add(`${path}.on_error`, `must be one of ${ON_ERROR.join(', ')}`);
  }
  const retry = node.retry;
  if (retry === undefined || retry === null) return policy;
  if (!isObject(retry)) {
    errors.add(`${path}.retry`, 'must be an object with max_attempts and backoff_seconds');
    return policy;
  }
  for (const key of Object.keys(retry)) {
    if (key !== 'max_attempts' && key !== 'backoff_seconds') errors.add(`${path}.retry.${key}`, 'is not a key of retry; allowed: max_attempts, backoff_seconds');
  }
  const attempts = retry.max_attempts ?? 1;
  const backoff = retry.backoff_seconds ?? 1;
  const attemptsOk = typeof attempts === 'number' && Number.isInteger(attempts) && attempts >= 1 && attempts <= MAX_ATTEMPTS;
  const backoffOk = typeof backoff === 'number' && Number.isFinite(backoff) && backoff >= 0 && backoff <= MAX_BACKOFF_SECONDS;
  if (!attemptsOk) errors.add(`${path}.retry.max_attempts`, `must be an integer from 1 to ${MAX_ATTEMPTS}`);
  if (!backoffOk) errors.add(`${path}.retry.backoff_seconds`, `must be a number of seconds from 0 to ${MAX_BACKOFF_SECONDS}`);
  if (attemptsOk && backoffOk) policy.retry = { max_attempts: attempts, backoff_seconds: backoff };
  return policy;
}

function checkEdges(edges: unknown, nodeIds: ReadonlySet<string>, triggerIds: ReadonlySet<string>, errors: FieldErrors): WorkflowEdge[] {
  const checked: WorkflowEdge[] = [];
  if (!Array.isArray(edges)) {
    errors.add('edges', 'must be an array');
    return checked;
  }
  if (edges.length > MAX_EDGES) {
    errors.add('edges', `must hold at most ${MAX_EDGES} edges`);
    return checked;
  }
  const seen = new Map<string, number>();
  edges.forEach((edge, index) => {
    const path = `edges[${index}]`;
    if (!isObject(edge)) {
      errors.add(path, 'must be an object with source and target');
      return;
    }
    const source = endpoint(edge.source, `${path}.source`, nodeIds, errors);
    let target = endpoint(edge.target, `${path}.target`, nodeIds, errors);
    if (target !== undefined && triggerIds.has(target)) {
      errors.add(`${path}.target`, `must not be the trigger node ${JSON.stringify(target)}: triggers have no incoming edges`);
      target = undefined;
    }
    if (source === undefined || target === undefined) return;
    if (source === target) {
      errors.add(`${path}.target`, 'must differ from source: a node cannot lead to itself');
      return;
    }
    const key = JSON.stringify([source, target]);
    const first = seen.get(key);
    if (first !== undefined) {
      errors.add(path, `duplicates edges[${first}]`);
      return;
    }
    seen.set(key, index);
    checked.push({ source, target });
  });
  return checked;
}

function endpoint(value: unknown, path: string, nodeIds: ReadonlySet<string>, errors: FieldErrors): string | undefined {
  if (value === undefined || value === null) errors.add(path, 'is required');
  else if (typeof value !== 'string') errors.add(path, 'must be a node id');
  else if (!nodeIds.has(value)) errors.add(path, `must be the id of a node of this workflow; there is no node ${JSON.stringify(value)}`);
  else return value;
  return undefined;
}

/** The nodes of one cycle, the first repeated at the end, or undefined for an acyclic graph. */
function findCycle(graph: WorkflowGraph): string[] | undefined {
  const successors = successorsOf(graph);
  const state = new Map<string, 'open' | 'done'>();
  for (const start of successors.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search: `path` is the chain of open nodes, `next` each one's cursor.
    const path: string[] = [start];
    const next: number[] = [0];
    state.set(start, 'open');
    while (path.length > 0) {
      const node = path[path.length - 1] as string;
      const cursor = next[next.length - 1] as number;
      const target = successors.get(node)?.[cursor];
      if (target === undefined) {
        state.set(node, 'done');
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = cursor + 1;
      if (state.get(target) === 'open') return [...path.slice(path.indexOf(target)), target];
      if (!state.has(target)) {
        state.set(target, 'open');
        path.push(target);
        next.push(0);
      }
    }
  }
  return undefined;
}

/** Node id → ids it leads to: its edges, then the targets it may choose; no duplicates. */
export function successorsOf(graph: WorkflowGraph): Map<string, string[]> {
  const successors = new Map<string, Set<string>>(graph.nodes.map((node) => [node.id, new Set<string>()]));
  for (const edge of graph.edges) successors.get(edge.source)?.add(edge.target);
  for (const node of graph.nodes) {
    for (const target of targetsOf(node)) successors.get(node.id)?.add(target);
  }
  return new Map([...successors].map(([id, targets]) => [id, [...targets]]));
}

/** The node ids a branching node (a condition) may choose; none for the rest. */
export function targetsOf(node: TypedNode): string[] {
  return kindOf(node).targets?.(node.config) ?? [];
}

/** Node id → ids that lead to it, edges and condition targets alike; no duplicates. */
export function predecessorsOf(graph: WorkflowGraph): Map<string, string[]> {
  const predecessors = new Map<string, string[]>(graph.nodes.map((node) => [node.id, []]));
  for (const [source, targets] of successorsOf(graph)) {
    for (const target of targets) predecessors.get(target)?.push(source);
  }
  return predecessors;
}

export function triggerNodeOf(graph: WorkflowGraph): WorkflowNode | undefined {
  return graph.nodes.find((node) => isTriggerType(node.type));
}

/** decisions §7: `webhook` with a webhook node, `schedule` with a schedule node, else `manual`. */
export function triggerTypeOf(graph: WorkflowGraph): TriggerType {
  const trigger = triggerNodeOf(graph);
  return trigger?.type === 'webhook' || trigger?.type === 'schedule' ? trigger.type : 'manual';
}

/** The webhook node's path ('' when none was given); undefined without a webhook node. */
export function webhookPathOf(graph: WorkflowGraph): string | undefined {
  const node = graph.nodes.find((candidate) => candidate.type === 'webhook');
  return node?.type === 'webhook' ? node.config.path : undefined;
}

/** The schedule node's cron and time zone; undefined without a schedule node. */
export function scheduleOf(graph: WorkflowGraph): ScheduleConfig | undefined {
  const node = graph.nodes.find((candidate) => candidate.type === 'schedule');
  return node?.type === 'schedule' ? node.config : undefined;
}

/**
 * Whether two checked graphs are the same, whatever the order of object keys (jsonb reorders them
 * on the way back): nodes and edges compare in order, since their order is part of the graph.
 */
export function sameGraph(a: WorkflowGraph, b: WorkflowGraph): boolean {
  return canonicalJson(a.nodes) === canonicalJson(b.nodes) && canonicalJson(a.edges) === canonicalJson(b.edges);
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    isObject(item) ? Object.fromEntries(Object.entries(item).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : item,
  );
}
