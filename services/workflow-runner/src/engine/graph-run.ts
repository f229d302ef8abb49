import { predecessorsOf, successorsOf, TRIGGER_NODE_TYPES, type WorkflowGraph, type WorkflowNode } from '../workflows/graph.js';

export type NodeState = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

/**
 * The graph semantics of decisions §7, without any I/O: which nodes may start, given what has
 * finished. A node runs when every incoming edge that was taken has finished and at least one was
 * taken; it is skipped when none of its incoming edges can be taken any more. An edge is taken when
 * its source completed and — for a condition node — its target is the branch the condition chose.
 * The run starts at the trigger node, or at every node without incoming edges when there is none.
 */
export class GraphRun {
  private readonly nodes = new Map<string, WorkflowNode>();
  private readonly successors: Map<string, readonly string[]>;
  private readonly predecessors: Map<string, readonly string[]>;
  private readonly states = new Map<string, NodeState>();
  /** For a completed condition node: the one target it chose (null: none). */
  private readonly chosen = new Map<string, string | null>();
  private readonly newlySkipped: string[] = [];

  constructor(graph: WorkflowGraph) {
    for (const node of graph.nodes) {
      this.nodes.set(node.id, node);
      this.states.set(node.id, 'pending');
    }
    this.successors = successorsOf(graph);
    this.predecessors = predecessorsOf(graph);
    const trigger = graph.nodes.find((node) => (TRIGGER_NODE_TYPES as readonly string[]).includes(node.type));
    // With a trigger, the run begins there; other nodes without incoming edges are unreachable.
    if (trigger) {
      for (const node of graph.nodes) if (node !== trigger && this.incoming(node.id).length === 0) this.skip(node.id);
    }
  }

  state(nodeId: string): NodeState {
    return this.states.get(nodeId) ?? 'pending';
  }

  /** Nodes that may start now (pending, with their inputs settled), marked running. */
  takeReady(): WorkflowNode[] {
    const ready: WorkflowNode[] = [];
    for (const [id, state] of this.states) {
      if (state === 'pending' && this.verdict(id) === 'run') {
        this.states.set(id, 'running');
        ready.push(this.nodes.get(id)!);
      }
    }
    return ready;
  }

  /** A node finished. `choice` is a condition node's chosen target (null: no rule matched). */
  complete(nodeId: string, choice?: string | null): void {
    this.states.set(nodeId, 'completed');
    if (choice !== undefined) this.chosen.set(nodeId, choice);
    this.settleAfter(nodeId);
  }

  fail(nodeId: string): void {
    this.states.set(nodeId, 'failed');
  }

  /** Marks a node skipped (and what can no longer run because of it). */
  skip(nodeId: string): void {
    if (this.states.get(nodeId) !== 'pending') return;
    this.states.set(nodeId, 'skipped');
    this.newlySkipped.push(nodeId);
    this.settleAfter(nodeId);
  }

  /** Nodes skipped since the last call, in the order they were decided. */
  drainSkipped(): string[] {
    return this.newlySkipped.splice(0);
  }

  /** True when nothing is pending or running. */
  get finished(): boolean {
    for (const state of this.states.values()) if (state === 'pending' || state === 'running') return false;
    return true;
  }

  get failed(): boolean {
    for (const state of this.states.values()) if (state === 'failed') return true;
    return false;
  }

  /** Completed nodes none of whose outgoing edges was taken: the results of the run. */
  leaves(): string[] {
    const leaves: string[] = [];
    for (const [id, state] of this.states) {
      if (state !== 'completed') continue;
      const next = this.successors.get(id) ?? [];
      if (!next.some((target) => this.edgeTaken(id, target) === true)) leaves.push(id);
    }
    return leaves;
  }

  private incoming(nodeId: string): readonly string[] {
    return this.predecessors.get(nodeId) ?? [];
  }

  /** true: taken; false: can no longer be taken; undefined: not decided yet. */
  private edgeTaken(source: string, target: string): boolean | undefined {
    const state = this.states.get(source);
    if (state === 'skipped' || state === 'failed') return false;
    if (state !== 'completed') return undefined;
    return this.chosen.has(source) ? this.chosen.get(source) === target : true;
  }

  private verdict(nodeId: string): 'run' | 'skip' | 'wait' {
    const incoming = this.incoming(nodeId);
    if (incoming.length === 0) return 'run';
    let taken = false;
    for (const source of incoming) {
      const edge = this.edgeTaken(source, nodeId);
      if (edge === undefined) return 'wait';
      taken ||= edge;
    }
    return taken ? 'run' : 'skip';
  }

  private settleAfter(nodeId: string): void {
    for (const target of this.successors.get(nodeId) ?? []) {
      if (this.states.get(target) === 'pending' && this.verdict(target) === 'skip') this.skip(target);
    }
  }
}
