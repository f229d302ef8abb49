import { requireAccessFor, type Actor } from '@agent-platform/kit';
import { TOOL_KINDS, TOOL_TYPES, type ToolType } from './kinds/tool-kinds.js';
import type { PlatformAction } from './kinds/tool-kind.js';

/**
 * decisions §12: what a tool of each type does on the platform (each kind's `platformAction`),
 * as the REST route that does the same thing, with that route's rule (kit's ACCESS, from which the
 * gateway's route table is made; no second copy). The security suites hold the gateway to it.
 */
export const TOOL_ACCESS = Object.fromEntries(TOOL_TYPES.map((type) => [type, TOOL_KINDS[type].platformAction])) as Record<ToolType, PlatformAction | undefined>;

/** forbidden, naming the tool type, when the actor may not do what a tool of `type` does. */
export function requireToolAccess(actor: Actor, type: ToolType): void {
  const action = TOOL_KINDS[type].platformAction;
  if (action !== undefined) requireAccessFor(actor, action.rule, `a ${type} tool needs: it acts on the platform as its caller`);
}
