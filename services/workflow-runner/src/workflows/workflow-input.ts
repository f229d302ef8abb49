import type { FieldErrors } from '@agent-platform/kit';
import { checkGraph, scheduleOf, triggerTypeOf, webhookPathOf, type WorkflowGraph } from './graph.js';
import type { WorkflowChanges } from './workflows.repository.js';

const MAX_NAME = 200;
const MAX_DESCRIPTION = 2_000;

export function checkName(name: string, errors: FieldErrors): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) errors.add('name', 'must not be blank');
  else if (trimmed.length > MAX_NAME) errors.add('name', `must be at most ${MAX_NAME} characters`);
  return trimmed;
}

export function checkDescription(description: string, errors: FieldErrors): string {
  if (description.length > MAX_DESCRIPTION) errors.add('description', `must be at most ${MAX_DESCRIPTION} characters`);
  return description;
}

/** JSON text from the gateway; a field that is not JSON is named (it cannot come from a REST body). */
function parseJson(text: string, field: string, errors: FieldErrors): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    errors.add(field, 'must be JSON');
    return undefined;
  }
}

/** The graph and everything derived from it, as columns. */
export function graphColumns(graph: WorkflowGraph): Required<Pick<WorkflowChanges, 'nodes' | 'edges' | 'triggerType' | 'webhookPath' | 'scheduleCron' | 'scheduleTimezone'>> {
  const schedule = scheduleOf(graph);
  return {
    nodes: graph.nodes,
    edges: graph.edges,
    triggerType: triggerTypeOf(graph),
    webhookPath: webhookPathOf(graph) ?? null,
    scheduleCron: schedule?.cron ?? null,
    scheduleTimezone: schedule?.timezone ?? null,
  };
}

/**
 * Validates nodes and edges given as JSON text, naming each bad field. Absent ones are `current`
 * (the workflow's own, on an update) or `[]`.
 */
export function checkGraphJson(
  nodesJson: string | undefined,
  edgesJson: string | undefined,
  errors: FieldErrors,
  current: WorkflowGraph = { nodes: [], edges: [] },
): WorkflowGraph {
  const nodes = nodesJson === undefined ? current.nodes : parseJson(nodesJson, 'nodes', errors);
  const edges = edgesJson === undefined ? current.edges : parseJson(edgesJson, 'edges', errors);
  return checkGraph(nodes, edges, errors);
}
