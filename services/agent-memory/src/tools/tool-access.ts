import { ACCESS, requireAccessFor, type AccessRule, type Actor } from '@agent-platform/kit';
import type { ToolType } from './tools.entity.js';

/** What a tool does on the platform: the REST route that does the same, and that route's rule. */
export interface PlatformAction {
  /** The gateway's route table key (`METHOD /path`); the security suites check its row is `rule`. */
  route: string;
  rule: AccessRule;
}

/**
 * decisions §12: what a tool of each type does on the platform, as the REST route that does the
 * same thing, with that route's rule (kit's ACCESS, from which the gateway's route table is made;
 * no second copy). A call of the tool, a save of it and an agent naming it all need the rule, so a
 * credential cannot do through an agent what it cannot do itself. Undefined: the tool reaches
 * outside the platform only (an http endpoint, an MCP server), with secrets of its own.
 */
export const TOOL_ACCESS: Record<ToolType, PlatformAction | undefined> = {
  http: undefined,
  mcp: undefined,
  workflow: { route: 'POST /workflows/:workflow_id/execute', rule: ACCESS.workflows.execute },
};

/** forbidden, naming the tool type, when the actor may not do what a tool of `type` does. */
export function requireToolAccess(actor: Actor, type: ToolType): void {
  const action = TOOL_ACCESS[type];
  if (action !== undefined) requireAccessFor(actor, action.rule, `a ${type} tool needs: it acts on the platform as its caller`);
}
