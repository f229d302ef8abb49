import { DomainError } from '@agent-platform/kit';
import { ExpressionError } from '../expressions/expressions.js';
import { IntegrationError } from '../integrations/integration.js';
import { NodeFailure, type NodeContext, type NodeResult, type NodeServices } from '../nodes/node-kind.js';
import { kindOf } from '../nodes/node-kinds.js';
import type { WorkflowNode } from '../workflows/graph.js';

export { NodeFailure, type NodeContext, type NodeResult } from '../nodes/node-kind.js';

/** Runs a reached node by its kind (nodes/<type>.ts); waiting kinds are begun by the runner instead. */
export class NodeRunners {
  private readonly services: NodeServices;

  constructor(services: NodeServices) {
    this.services = services;
  }

  /** Nodes whose effects leave the platform: never run twice for one execution. */
  hasSideEffects(node: WorkflowNode): boolean {
    return kindOf(node).hasSideEffects(node.config);
  }

  async run(node: WorkflowNode, ctx: NodeContext): Promise<NodeResult> {
    const { behaviour } = kindOf(node);
    if (behaviour.waits) throw new NodeFailure(`a ${node.type} node waits; it is not run`);
    try {
      return await behaviour.run(node.config, ctx, this.services);
    } catch (error) {
      throw asNodeFailure(error);
    }
  }
}

function asNodeFailure(error: unknown): unknown {
  if (error instanceof NodeFailure) return error;
  if (error instanceof ExpressionError || error instanceof IntegrationError) return new NodeFailure(error.message);
  if (error instanceof DomainError) return new NodeFailure(`${error.code}: ${error.message}`);
  return error;
}
