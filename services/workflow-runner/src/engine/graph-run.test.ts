import { describe, expect, it } from 'vitest';
import type { WorkflowGraph, WorkflowNode } from '../workflows/graph.js';
import { GraphRun } from './graph-run.js';

const condition = (id: string, targets: string[] = []): WorkflowNode => ({
  id,
  type: 'condition',
  config: { rules: targets.map((target) => ({ if: 'true', goto: target })) },
});
const http = (id: string): WorkflowNode => ({ id, type: 'integration', config: { service: 'http', url: 'https://example.com', method: 'POST', headers: {} } });
const webhook = (id: string): WorkflowNode => ({ id, type: 'webhook', config: { path: '' } });
const edge = (source: string, target: string) => ({ source, target });

function ids(nodes: WorkflowNode[]): string[] {
  return nodes.map((node) => node.id).sort();
}

describe('GraphRun (decisions §7 semantics)', () => {
  it('starts every node without incoming edges when there is no trigger', () => {
    const run = new GraphRun({ nodes: [http('a'), http('b'), http('c')], edges: [edge('a', 'c')] });
    expect(ids(run.takeReady())).toEqual(['a', 'b']);
    expect(run.takeReady()).toEqual([]);
  });

  it('starts at the trigger and skips the other nodes without incoming edges', () => {
    const run = new GraphRun({ nodes: [webhook('in'), http('a'), http('orphan')], edges: [edge('in', 'a')] });
    expect(ids(run.takeReady())).toEqual(['in']);
    expect(run.drainSkipped()).toEqual(['orphan']);
    run.complete('in');
    expect(ids(run.takeReady())).toEqual(['a']);
    run.complete('a');
    expect(run.finished).toBe(true);
    expect(run.leaves()).toEqual(['a']);
  });

  it('joins parallel branches: the join waits for both', () => {
    const graph: WorkflowGraph = { nodes: [http('left'), http('right'), http('join')], edges: [edge('left', 'join'), edge('right', 'join')] };
    const run = new GraphRun(graph);
    expect(ids(run.takeReady())).toEqual(['left', 'right']);
    run.complete('left');
    expect(run.takeReady()).toEqual([]);
    run.complete('right');
    expect(ids(run.takeReady())).toEqual(['join']);
  });

  it('runs only the branch a condition chooses and skips the rest transitively', () => {
    const graph: WorkflowGraph = {
      nodes: [condition('check', ['yes', 'no']), http('yes'), http('no'), http('after-no'), http('join')],
      edges: [edge('check', 'yes'), edge('check', 'no'), edge('no', 'after-no'), edge('yes', 'join'), edge('after-no', 'join')],
    };
    const run = new GraphRun(graph);
    expect(ids(run.takeReady())).toEqual(['check']);
    run.complete('check', 'yes');
    expect(run.drainSkipped()).toEqual(['no', 'after-no']);
    expect(ids(run.takeReady())).toEqual(['yes']);
    run.complete('yes');
    // The join had one taken edge (from yes) and one that can no longer be taken: it runs.
    expect(ids(run.takeReady())).toEqual(['join']);
    run.complete('join');
    expect(run.finished).toBe(true);
    expect(run.state('no')).toBe('skipped');
  });

  it('skips every target of a condition that matched nothing', () => {
    const run = new GraphRun({ nodes: [condition('check', ['a']), http('a'), http('b')], edges: [edge('check', 'b')] });
    run.takeReady();
    run.complete('check', null);
    expect(run.drainSkipped().sort()).toEqual(['a', 'b']);
    expect(run.finished).toBe(true);
    expect(run.leaves()).toEqual(['check']);
  });

  it('reports a failure and is not finished while nodes are pending', () => {
    const run = new GraphRun({ nodes: [http('a'), http('b')], edges: [edge('a', 'b')] });
    run.takeReady();
    run.fail('a');
    expect(run.failed).toBe(true);
    expect(run.state('b')).toBe('pending');
    expect(run.takeReady()).toEqual([]);
  });

  it('names every completed node without a taken outgoing edge as a result', () => {
    const run = new GraphRun({ nodes: [http('a'), http('b'), http('c')], edges: [edge('a', 'b')] });
    run.takeReady();
    run.complete('a');
    run.complete('c');
    run.takeReady();
    run.complete('b');
    expect(run.leaves().sort()).toEqual(['b', 'c']);
  });
});
