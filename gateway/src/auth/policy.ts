import { ACCESS, DomainError, hasScope, roleAtLeast, type AccessRule, type Role, type Scope } from '@agent-platform/kit';
import type { AuthenticatedPrincipal } from './principal.js';

/** none: no credential; user: access tokens only; user-or-key: access tokens and API keys. */
export type AuthKind = 'none' | 'user' | 'user-or-key';

export interface RoutePolicy {
  auth: AuthKind;
  /** Least role in the tenant the call acts in. */
  minRole?: Role;
  /** What an API key must hold (besides its creator's role); only for `user-or-key`. */
  scope?: Scope;
}

/** A route open to access tokens and API keys under one of kit's ACCESS rules. */
function userOrKey<const Rule extends AccessRule>(rule: Rule) {
  return { auth: 'user-or-key', minRole: rule.role, scope: rule.scope } as const;
}

const AGENTS_READ = userOrKey(ACCESS.agents.read);
const AGENTS_WRITE = userOrKey(ACCESS.agents.write);
const MEMORY_READ = userOrKey(ACCESS.memory.read);
const MEMORY_WRITE = userOrKey(ACCESS.memory.write);
const TOOLS_READ = userOrKey(ACCESS.tools.read);
const TOOLS_WRITE = userOrKey(ACCESS.tools.write);
const WEBHOOKS_READ = userOrKey(ACCESS.webhooks.read);
const WEBHOOKS_WRITE = userOrKey(ACCESS.webhooks.write);
const BILLING_READ = userOrKey(ACCESS.billing.read);
const WORKFLOWS_READ = userOrKey(ACCESS.workflows.read);
const WORKFLOWS_WRITE = userOrKey(ACCESS.workflows.write);
const WORKFLOWS_EXECUTE = userOrKey(ACCESS.workflows.execute);
const MCP_ENDPOINT = { auth: 'user-or-key', minRole: 'viewer' } as const;

/**
 * THE table: every route of the versioned API, keyed `METHOD /path` below `/api/v1` (and `/v1`).
 * The routes themselves are the folder tree under src/routes/api/v1 (`_agent_id/` is `:agent_id`);
 * the gateway refuses to start when a route has no row here or a row has no route (routeTableDrift,
 * checked by routes/api.ts), so the two cannot drift. `docs/api.md` reproduces it, the OpenAPI
 * security comes from it, and the e2e security suite runs once per row. Rows are decisions §3
 * (least role in the tenant) and §4 (the scope an API key also needs; `user` rows refuse keys).
 */
export const POLICIES = {
  'POST /auth/register': { auth: 'none' },
  'POST /auth/login': { auth: 'none' },
  'POST /auth/refresh': { auth: 'none' },
  'GET /auth/me': { auth: 'user-or-key', minRole: 'viewer' },
  'POST /auth/api-keys': { auth: 'user', minRole: 'admin' },
  'GET /auth/api-keys': { auth: 'user', minRole: 'admin' },
  'DELETE /auth/api-keys/:key_id': { auth: 'user', minRole: 'admin' },
  'GET /billing/credits': BILLING_READ,
  'GET /billing/transactions': BILLING_READ,
  'POST /billing/purchases': { auth: 'user', minRole: 'owner' },
  'GET /tenants/:tenant_id/members': { auth: 'user', minRole: 'admin' },
  'POST /tenants/:tenant_id/members': { auth: 'user', minRole: 'admin' },
  'PATCH /tenants/:tenant_id/members/:user_id': { auth: 'user', minRole: 'admin' },
  'DELETE /tenants/:tenant_id/members/:user_id': { auth: 'user', minRole: 'admin' },
  'GET /agents': AGENTS_READ,
  'POST /agents': AGENTS_WRITE,
  'GET /agents/:agent_id': AGENTS_READ,
  'PATCH /agents/:agent_id': AGENTS_WRITE,
  'PUT /agents/:agent_id': AGENTS_WRITE,
  'DELETE /agents/:agent_id': AGENTS_WRITE,
  // A chat turn writes the session and its messages; reading them back is a read of the agent.
  'POST /agents/:agent_id/chat': AGENTS_WRITE,
  'GET /agents/:agent_id/sessions': AGENTS_READ,
  'GET /agents/:agent_id/sessions/:session_id/messages': AGENTS_READ,
  'DELETE /agents/:agent_id/sessions/:session_id': AGENTS_WRITE,
  // A decision continues a chat turn: the same access as sending the message.
  'POST /agents/:agent_id/sessions/:session_id/tool-calls/:call_id/approve': AGENTS_WRITE,
  'POST /agents/:agent_id/sessions/:session_id/tool-calls/:call_id/reject': AGENTS_WRITE,
  'GET /agents/:agent_id/runs': AGENTS_READ,
  'GET /agents/:agent_id/stats': AGENTS_READ,
  'POST /agents/:agent_id/runs': AGENTS_WRITE,
  'GET /runs/:run_id': AGENTS_READ,
  'GET /runs/:run_id/events': AGENTS_READ,
  'POST /runs/:run_id/cancel': AGENTS_WRITE,
  'POST /runs/:run_id/feedback': AGENTS_WRITE,
  'GET /agents/:agent_id/versions': AGENTS_READ,
  'GET /agents/:agent_id/versions/:version': AGENTS_READ,
  // A restore saves settings, as a PATCH does.
  'POST /agents/:agent_id/versions/:version/restore': AGENTS_WRITE,
  // Consolidation writes semantic memory items from the sessions.
  'POST /agents/:agent_id/memory/consolidate': MEMORY_WRITE,
  'POST /memory': MEMORY_WRITE,
  'GET /memory': MEMORY_READ,
  'POST /memory/search': MEMORY_READ,
  'DELETE /memory': MEMORY_WRITE,
  'PATCH /memory/:memory_id': MEMORY_WRITE,
  'GET /memory/:memory_id/history': MEMORY_READ,
  'DELETE /memory/:memory_id': MEMORY_WRITE,
  'POST /memory/documents': MEMORY_WRITE,
  'GET /memory/documents': MEMORY_READ,
  'GET /memory/documents/:document_id': MEMORY_READ,
  'GET /memory/documents/:document_id/chunks': MEMORY_READ,
  'GET /memory/documents/:document_id/file': MEMORY_READ,
  // A refresh replaces chunks when the text changed, as adding the document wrote them.
  'POST /memory/documents/:document_id/refresh': MEMORY_WRITE,
  'DELETE /memory/documents/:document_id': MEMORY_WRITE,
  'GET /tools': TOOLS_READ,
  'POST /tools': TOOLS_WRITE,
  'GET /tools/:tool_id': TOOLS_READ,
  'PUT /tools/:tool_id': TOOLS_WRITE,
  'DELETE /tools/:tool_id': TOOLS_WRITE,
  // Refreshing rewrites the tool's discovered list.
  'POST /tools/:tool_id/refresh': TOOLS_WRITE,
  // A dataset is test data of the tenant's agents (decisions §16): the agents' access.
  'GET /datasets': AGENTS_READ,
  'POST /datasets': AGENTS_WRITE,
  'GET /datasets/:dataset_id': AGENTS_READ,
  'DELETE /datasets/:dataset_id': AGENTS_WRITE,
  'GET /datasets/:dataset_id/items': AGENTS_READ,
  'POST /datasets/:dataset_id/items': AGENTS_WRITE,
  'DELETE /datasets/:dataset_id/items/:item_id': AGENTS_WRITE,
  'POST /evals': AGENTS_WRITE,
  'GET /evals': AGENTS_READ,
  'GET /evals/compare': AGENTS_READ,
  'GET /evals/:eval_id': AGENTS_READ,
  'GET /evals/:eval_id/results': AGENTS_READ,
  'GET /webhooks': WEBHOOKS_READ,
  'POST /webhooks': WEBHOOKS_WRITE,
  'GET /webhooks/:webhook_id': WEBHOOKS_READ,
  'PATCH /webhooks/:webhook_id': WEBHOOKS_WRITE,
  'DELETE /webhooks/:webhook_id': WEBHOOKS_WRITE,
  'POST /webhooks/:webhook_id/enable': WEBHOOKS_WRITE,
  'POST /webhooks/:webhook_id/rotate-secret': WEBHOOKS_WRITE,
  'POST /webhooks/:webhook_id/test': WEBHOOKS_WRITE,
  'GET /webhooks/:webhook_id/deliveries': WEBHOOKS_READ,
  'GET /webhooks/:webhook_id/deliveries/:delivery_id': WEBHOOKS_READ,
  'POST /webhooks/:webhook_id/deliveries/:delivery_id/retry': WEBHOOKS_WRITE,
  'GET /workflows': WORKFLOWS_READ,
  'POST /workflows': WORKFLOWS_WRITE,
  'GET /workflows/:workflow_id': WORKFLOWS_READ,
  'PUT /workflows/:workflow_id': WORKFLOWS_WRITE,
  'DELETE /workflows/:workflow_id': WORKFLOWS_WRITE,
  'POST /workflows/:workflow_id/pause': WORKFLOWS_WRITE,
  'POST /workflows/:workflow_id/resume': WORKFLOWS_WRITE,
  'POST /workflows/:workflow_id/execute': WORKFLOWS_EXECUTE,
  'GET /workflows/:workflow_id/versions': WORKFLOWS_READ,
  'GET /workflows/:workflow_id/versions/:version': WORKFLOWS_READ,
  // A restore saves a graph, as a PUT does.
  'POST /workflows/:workflow_id/versions/:version/restore': WORKFLOWS_WRITE,
  'GET /workflows/:workflow_id/executions': WORKFLOWS_READ,
  'GET /workflows/:workflow_id/executions/:execution_id': WORKFLOWS_READ,
  // Cancelling and retrying act on runs, as execute does.
  'POST /workflows/:workflow_id/executions/:execution_id/cancel': WORKFLOWS_EXECUTE,
  'POST /workflows/:workflow_id/executions/:execution_id/retry': WORKFLOWS_EXECUTE,
  'POST /workflows/:workflow_id/executions/:execution_id/nodes/:node_id/approve': WORKFLOWS_EXECUTE,
  'POST /workflows/:workflow_id/executions/:execution_id/nodes/:node_id/reject': WORKFLOWS_EXECUTE,
  // The MCP server (decisions §12.11): any credential of the tenant gets in, and each tool then
  // needs its REST route's row (src/mcp/tools.ts), so a key uses the tools its scopes allow.
  // GET and DELETE answer 405 (no event stream, no session), to the same credentials.
  'POST /mcp': MCP_ENDPOINT,
  'GET /mcp': MCP_ENDPOINT,
  'DELETE /mcp': MCP_ENDPOINT,
} as const satisfies Record<string, RoutePolicy>;

export type PolicyKey = keyof typeof POLICIES;

export function policyFor(method: string, path: string): RoutePolicy | undefined {
  const key = `${method.toUpperCase()} ${path}`;
  return Object.hasOwn(POLICIES, key) ? POLICIES[key as PolicyKey] : undefined;
}

/**
 * The table against the routes really registered, given as `METHOD /path` keys like its own:
 * the routes without a row and the rows without a route. Both empty, or the gateway does not start.
 */
export function routeTableDrift(routeKeys: Iterable<string>): { unlisted: string[]; unrouted: string[] } {
  const routed = new Set(routeKeys);
  return {
    unlisted: [...routed].filter((key) => !Object.hasOwn(POLICIES, key)),
    unrouted: Object.keys(POLICIES).filter((key) => !routed.has(key)),
  };
}

/**
 * Why the principal may not act under the policy, or undefined when it may. A key acts with (its
 * creator's role) ∩ (its scopes): both must allow the route. The reason names which of the three
 * failed (kind, role, scope) without naming anything of another tenant.
 */
export function refusalOf(principal: AuthenticatedPrincipal, policy: RoutePolicy): string | undefined {
  if (policy.auth === 'none') return undefined;
  if (principal.kind === 'api_key' && policy.auth === 'user') return 'API keys cannot be used on this endpoint; use an access token.';
  if (policy.minRole && !roleAtLeast(principal.role, policy.minRole)) return `This action needs the ${policy.minRole} role or higher in the tenant.`;
  if (principal.kind === 'api_key' && policy.scope && !hasScope(principal.scopes, policy.scope)) return `This API key lacks the ${policy.scope} scope.`;
  return undefined;
}

/** Throws forbidden with the reason when the principal may not act under the policy (`refusalOf`). */
export function authorize(principal: AuthenticatedPrincipal, policy: RoutePolicy): void {
  const refusal = refusalOf(principal, policy);
  if (refusal !== undefined) throw new DomainError('forbidden', refusal);
}
