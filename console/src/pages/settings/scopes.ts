import type { RequestBody } from '@agent-platform/client';

export type Scope = RequestBody<'/api/v1/auth/api-keys', 'post'>['scopes'][number];

/**
 * The scope catalogue (decisions §4) with what each allows. A Record over the API's own enum, so
 * a scope added to the API fails type-checking here until it is described.
 */
const SCOPE_DESCRIPTIONS: Record<Exclude<Scope, '*'>, string> = {
  'agents:read': 'Read agents, sessions and chats',
  'agents:write': 'Create, change and chat with agents',
  'memory:read': 'Read and search memory',
  'memory:write': 'Add, change and delete memory',
  'workflows:read': 'Read workflows and executions',
  'workflows:write': 'Create and change workflows',
  'workflows:execute': 'Run workflows and decide approvals',
  'webhooks:read': 'Read webhooks and deliveries',
  'webhooks:write': 'Create, change and test webhooks',
  'billing:read': 'Read credits and the ledger',
  'tools:read': 'Read tools',
  'tools:write': 'Create and change tools',
};

export const SCOPES = Object.entries(SCOPE_DESCRIPTIONS).map(([scope, description]) => ({ scope: scope as Scope, description }));
