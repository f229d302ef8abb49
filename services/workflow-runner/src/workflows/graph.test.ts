import { DomainError, FieldErrors, newId, type FieldError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { checkGraph, MAX_NODES, predecessorsOf, sameGraph, scheduleOf, successorsOf, triggerNodeOf, triggerTypeOf, webhookPathOf, type WorkflowGraph } from './graph.js';

function problems(nodes: unknown, edges: unknown = []): FieldError[] {
  const errors = new FieldErrors();
  checkGraph(nodes, edges, errors);
  try {
    errors.throwIfAny();
  } catch (error) {
    if (error instanceof DomainError) return error.details;
    throw error;
  }
  return [];
}

function valid(nodes: unknown, edges: unknown = []): WorkflowGraph {
  const errors = new FieldErrors();
  const graph = checkGraph(nodes, edges, errors);
  errors.throwIfAny();
  return graph;
}

function fields(nodes: unknown, edges: unknown = []): string[] {
  return problems(nodes, edges).map((problem) => problem.field);
}

const agentId = newId('agent');
const agent = (id: string) => ({ id, type: 'agent', config: { agent_id: agentId } });

function realistic(): { nodes: unknown[]; edges: unknown[] } {
  return {
    nodes: [
      { id: 'hook', type: 'webhook', config: { path: '/orders' } },
      {
        id: 'route',
        type: 'condition',
        config: { rules: [{ if: 'input.amount > 100 && request.headers["x-kind"] == "order"', goto: 'notify-http' }, { else: 'notify-slack' }] },
      },
      {
        id: 'notify-http',
        type: 'integration',
        config: { service: 'http', url: 'https://api.example.com/orders/{{ input.id }}', method: 'put', headers: { 'Content-Type': 'application/json' }, body: { total: '{{ input.amount }}' } },
      },
      { id: 'notify-slack', type: 'integration', config: { service: 'slack', webhook_url: 'https://hooks.slack.com/services/T/B/X', text: 'Small order {{ input.id }}' } },
      { id: 'summarise', type: 'agent', config: { agent_id: agentId, message: 'Summarise order {{ input.id }}: {{ nodes }}', timeout_ms: 60_000 } },
    ],
    edges: [
      { source: 'hook', target: 'route' },
      { source: 'notify-http', target: 'summarise' },
      { source: 'notify-slack', target: 'summarise' },
    ],
  };
}

describe('a realistic workflow', () => {
  it('is accepted and typed, with defaults filled in', () => {
    const { nodes, edges } = realistic();
    const graph = valid(nodes, edges);
    expect(graph.nodes.map((node) => node.id)).toEqual(['hook', 'route', 'notify-http', 'notify-slack', 'summarise']);
    expect(graph.nodes[2]).toEqual({
      id: 'notify-http',
      type: 'integration',
      config: { service: 'http', url: 'https://api.example.com/orders/{{ input.id }}', method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: { total: '{{ input.amount }}' } },
    });
    expect(graph.edges).toEqual(edges);
    expect(triggerTypeOf(graph)).toBe('webhook');
    expect(triggerNodeOf(graph)?.id).toBe('hook');
    expect(webhookPathOf(graph)).toBe('/orders');
    expect(scheduleOf(graph)).toBeUndefined();
  });

  it('has successors and predecessors through edges and condition targets', () => {
    const { nodes, edges } = realistic();
    const graph = valid(nodes, [...edges, { source: 'route', target: 'notify-http' }]);
    expect(successorsOf(graph)).toEqual(
      new Map([
        ['hook', ['route']],
        ['route', ['notify-http', 'notify-slack']],
        ['notify-http', ['summarise']],
        ['notify-slack', ['summarise']],
        ['summarise', []],
      ]),
    );
    expect(predecessorsOf(graph).get('summarise')).toEqual(['notify-http', 'notify-slack']);
    expect(predecessorsOf(graph).get('notify-http')).toEqual(['route']);
    expect(predecessorsOf(graph).get('hook')).toEqual([]);
  });
});

describe('trigger', () => {
  it('is manual without a trigger node, and an empty graph is valid', () => {
    const graph = valid([]);
    expect(triggerTypeOf(graph)).toBe('manual');
    expect(triggerNodeOf(graph)).toBeUndefined();
    expect(webhookPathOf(graph)).toBeUndefined();
    expect(triggerTypeOf(valid([agent('a')]))).toBe('manual');
  });

  it('is a schedule with its cron and time zone', () => {
    const graph = valid([{ id: 's', type: 'schedule', config: { cron: '*/5 * * * *' } }, agent('a')], [{ source: 's', target: 'a' }]);
    expect(triggerTypeOf(graph)).toBe('schedule');
    expect(scheduleOf(graph)).toEqual({ cron: '*/5 * * * *', timezone: 'UTC' });
  });

  it("is a webhook whose path is '' when none is given", () => {
    expect(webhookPathOf(valid([{ id: 'w', type: 'webhook' }]))).toBe('');
    expect(webhookPathOf(valid([{ id: 'w', type: 'webhook', config: { path: '' } }]))).toBe('');
  });

  it('is at most one node', () => {
    expect(problems([{ id: 'w', type: 'webhook' }, agent('a'), { id: 's', type: 'schedule', config: { cron: '* * * * *' } }])).toEqual([
      { field: 'nodes[2].type', message: expect.stringMatching(/second trigger node.*nodes\[0\]/) },
    ]);
  });

  it('has no incoming edges or condition targets', () => {
    const nodes = [{ id: 'w', type: 'webhook' }, agent('a'), { id: 'c', type: 'condition', config: { rules: [{ else: 'w' }] } }];
    expect(problems(nodes, [{ source: 'a', target: 'w' }])).toEqual([
      { field: 'nodes[2].config.rules[0].else', message: expect.stringMatching(/must not lead to the trigger node "w"/) },
      { field: 'edges[0].target', message: expect.stringMatching(/must not be the trigger node "w"/) },
    ]);
  });
});

describe('nodes', () => {
  it.each([
    ['not an array', { id: 'a' }, ['nodes']],
    ['a node that is no object', [agent('a'), 'b'], ['nodes[1]']],
    ['a missing id', [{ type: 'agent', config: { agent_id: agentId } }], ['nodes[0].id']],
    ['an id with a space', [agent('a b')], ['nodes[0].id']],
    ['an id of 101 characters', [agent('x'.repeat(101))], ['nodes[0].id']],
    ['a duplicate id', [agent('a'), agent('b'), agent('c'), agent('a')], ['nodes[3].id']],
    ['an unknown type', [agent('a'), agent('b'), { id: 'c', type: 'loop', config: {} }], ['nodes[2].type']],
    ['a missing type', [{ id: 'a' }], ['nodes[0].type']],
    ['a config that is no object', [{ id: 'a', type: 'webhook', config: [] }], ['nodes[0].config']],
  ])('refuse %s', (_name, nodes, expected) => {
    expect(fields(nodes)).toEqual(expected);
  });

  it(`accept ${MAX_NODES} nodes in a chain and refuse ${MAX_NODES + 1}`, () => {
    const chain = (count: number) => {
      const nodes: unknown[] = [{ id: 'n0', type: 'webhook', config: { path: '/big' } }];
      for (let i = 1; i < count; i++) nodes.push(agent(`n${i}`));
      const edges = Array.from({ length: count - 1 }, (_, i) => ({ source: `n${i}`, target: `n${i + 1}` }));
      return { nodes, edges };
    };
    const big = chain(MAX_NODES);
    expect(valid(big.nodes, big.edges).nodes).toHaveLength(MAX_NODES);
    const tooBig = chain(MAX_NODES + 1);
    expect(problems(tooBig.nodes, tooBig.edges)).toEqual([{ field: 'nodes', message: 'must hold at most 200 nodes, not 201' }]);
  });
});

describe('edges', () => {
  const nodes = [agent('a'), agent('b'), agent('c')];

  it.each([
    ['not an array', {}, ['edges']],
    ['an edge that is no object', ['a->b'], ['edges[0]']],
    ['an unknown target', [{ source: 'a', target: 'z' }], ['edges[0].target']],
    ['an unknown source', [{ source: 'z', target: 'a' }], ['edges[0].source']],
    ['a missing target', [{ source: 'a' }], ['edges[0].target']],
    ['a source that is no string', [{ source: 1, target: 'a' }], ['edges[0].source']],
    ['a self-loop', [{ source: 'a', target: 'a' }], ['edges[0].target']],
    ['a duplicate', [{ source: 'a', target: 'b' }, { source: 'b', target: 'c' }, { source: 'a', target: 'b' }], ['edges[2]']],
  ])('refuse %s', (_name, edges, expected) => {
    expect(fields(nodes, edges)).toEqual(expected);
  });

  it('refuse a cycle, naming its nodes', () => {
    expect(problems(nodes, [{ source: 'a', target: 'b' }, { source: 'b', target: 'c' }, { source: 'c', target: 'a' }])).toEqual([
      { field: 'edges', message: expect.stringContaining('a → b → c → a') },
    ]);
  });

  it('refuse a cycle closed by a condition target', () => {
    const withCondition = [...nodes, { id: 'check', type: 'condition', config: { rules: [{ if: 'true', goto: 'a' }] } }];
    expect(problems(withCondition, [{ source: 'a', target: 'check' }])).toEqual([{ field: 'edges', message: expect.stringContaining('a → check → a') }]);
  });

  it('accept a diamond, which is no cycle', () => {
    const diamond = [agent('a'), agent('b'), agent('c'), agent('d')];
    const edges = [{ source: 'a', target: 'b' }, { source: 'a', target: 'c' }, { source: 'b', target: 'd' }, { source: 'c', target: 'd' }];
    expect(valid(diamond, edges).edges).toHaveLength(4);
  });
});

describe('sameGraph', () => {
  const http = { id: 'call', type: 'integration', config: { service: 'http', url: 'https://api.example.com/orders', method: 'post', headers: {} } };
  const first = valid([http, { id: 'next', type: 'condition', config: { rules: [] } }], [{ source: 'call', target: 'next' }]);

  it('sees no change in key order, ignored fields or defaults spelled out (decisions §13.1)', () => {
    const reordered = { config: { url: 'https://api.example.com/orders', service: 'http' }, type: 'integration', id: 'call', position: { x: 10, y: 20 } };
    const other = valid([reordered, { type: 'condition', id: 'next', config: { rules: [] } }], [{ target: 'next', source: 'call', label: 'then' }]);
    expect(sameGraph(first, other)).toBe(true);
    // What jsonb hands back: the same values, keys in its own order.
    const reversed = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(reversed) : typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reversed(item)])) : value;
    expect(sameGraph(first, reversed(first) as WorkflowGraph)).toBe(true);
  });

  it('sees a changed value, another node order or another edge', () => {
    expect(sameGraph(first, valid([{ ...http, config: { ...http.config, method: 'GET' } }, { id: 'next', type: 'condition', config: { rules: [] } }], [{ source: 'call', target: 'next' }]))).toBe(false);
    expect(sameGraph(first, valid([{ id: 'next', type: 'condition', config: { rules: [] } }, http], [{ source: 'call', target: 'next' }]))).toBe(false);
    expect(sameGraph(first, valid([http, { id: 'next', type: 'condition', config: { rules: [] } }]))).toBe(false);
  });
});
