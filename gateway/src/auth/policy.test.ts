import { DomainError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { hasScope, roleAtLeast } from '@agent-platform/kit';
import { authorize, POLICIES, policyFor, routeTableDrift, type RoutePolicy } from './policy.js';
import type { AuthenticatedPrincipal } from './principal.js';

function principal(overrides: Partial<AuthenticatedPrincipal>): AuthenticatedPrincipal {
  return { kind: 'user', userId: 'usr_1', apiKeyId: undefined, tenantId: 'tnt_1', role: 'owner', scopes: [], plan: 'free', ...overrides };
}

function forbidden(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('forbidden');
    return (error as DomainError).message;
  }
  throw new Error('expected forbidden');
}

describe('the policy table', () => {
  it('follows decisions §3 and §4 for the routes the spec names', () => {
    expect(POLICIES['GET /auth/me']).toEqual({ auth: 'user-or-key', minRole: 'viewer' });
    expect(POLICIES['GET /billing/credits']).toMatchObject({ auth: 'user-or-key', scope: 'billing:read' });
    expect(POLICIES['POST /billing/purchases']).toEqual({ auth: 'user', minRole: 'owner' });
    // The MCP endpoint lets in any credential of the tenant; each tool then needs its REST route's row.
    const unscoped = new Set(['GET /auth/me', 'POST /mcp', 'GET /mcp', 'DELETE /mcp']);
    for (const [key, policy] of Object.entries(POLICIES) as [string, RoutePolicy][]) {
      if (key.includes('/auth/api-keys') || key.includes('/tenants/')) expect(policy, key).toEqual({ auth: 'user', minRole: 'admin' });
      if (policy.auth === 'user-or-key' && !unscoped.has(key)) expect(policy.scope, key).toBeDefined();
    }
    for (const key of ['POST /mcp', 'GET /mcp', 'DELETE /mcp'] as const) expect(POLICIES[key], key).toEqual({ auth: 'user-or-key', minRole: 'viewer' });
  });

  it('lets anyone in the tenant read webhooks and admins manage them, keys by webhooks:read / webhooks:write', () => {
    const rows = Object.entries(POLICIES).filter(([key]) => key.includes(' /webhooks'));
    expect(rows.map(([key]) => key).sort()).toEqual([
      'DELETE /webhooks/:webhook_id',
      'GET /webhooks',
      'GET /webhooks/:webhook_id',
      'GET /webhooks/:webhook_id/deliveries',
      'GET /webhooks/:webhook_id/deliveries/:delivery_id',
      'PATCH /webhooks/:webhook_id',
      'POST /webhooks',
      'POST /webhooks/:webhook_id/deliveries/:delivery_id/retry',
      'POST /webhooks/:webhook_id/enable',
      'POST /webhooks/:webhook_id/rotate-secret',
      'POST /webhooks/:webhook_id/test',
    ]);
    for (const [key, policy] of rows) {
      const read = key.startsWith('GET ');
      expect(policy, key).toEqual(
        read ? { auth: 'user-or-key', minRole: 'viewer', scope: 'webhooks:read' } : { auth: 'user-or-key', minRole: 'admin', scope: 'webhooks:write' },
      );
    }
  });

  it('guards agents, their versions and runs with agents:read / agents:write and memory with memory:read / memory:write (decisions §3, §4, §16)', () => {
    const AGENTS_READ = { auth: 'user-or-key', minRole: 'viewer', scope: 'agents:read' };
    const AGENTS_WRITE = { auth: 'user-or-key', minRole: 'member', scope: 'agents:write' };
    const MEMORY_READ = { auth: 'user-or-key', minRole: 'viewer', scope: 'memory:read' };
    const MEMORY_WRITE = { auth: 'user-or-key', minRole: 'member', scope: 'memory:write' };
    const rows = Object.fromEntries(Object.entries(POLICIES).filter(([key]) => / \/(agents|memory|runs)/.test(key)));
    expect(rows).toEqual({
      'GET /agents': AGENTS_READ,
      'POST /agents': AGENTS_WRITE,
      'GET /agents/:agent_id': AGENTS_READ,
      'PATCH /agents/:agent_id': AGENTS_WRITE,
      'PUT /agents/:agent_id': AGENTS_WRITE,
      'DELETE /agents/:agent_id': AGENTS_WRITE,
      'POST /agents/:agent_id/chat': AGENTS_WRITE,
      'GET /agents/:agent_id/sessions': AGENTS_READ,
      'GET /agents/:agent_id/sessions/:session_id/messages': AGENTS_READ,
      'DELETE /agents/:agent_id/sessions/:session_id': AGENTS_WRITE,
      'POST /agents/:agent_id/sessions/:session_id/tool-calls/:call_id/approve': AGENTS_WRITE,
      'POST /agents/:agent_id/sessions/:session_id/tool-calls/:call_id/reject': AGENTS_WRITE,
      'GET /agents/:agent_id/runs': AGENTS_READ,
      'POST /agents/:agent_id/runs': AGENTS_WRITE,
      'GET /agents/:agent_id/stats': AGENTS_READ,
      'GET /agents/:agent_id/versions': AGENTS_READ,
      'GET /agents/:agent_id/versions/:version': AGENTS_READ,
      'POST /agents/:agent_id/versions/:version/restore': AGENTS_WRITE,
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
      'POST /memory/documents/:document_id/refresh': MEMORY_WRITE,
      'DELETE /memory/documents/:document_id': MEMORY_WRITE,
      'GET /runs/:run_id': AGENTS_READ,
      'GET /runs/:run_id/events': AGENTS_READ,
      'POST /runs/:run_id/cancel': AGENTS_WRITE,
      'POST /runs/:run_id/feedback': AGENTS_WRITE,
    });
  });

  it('guards workflows, their versions and executions with workflows:read / write / execute (decisions §3, §4, §13)', () => {
    const READ = { auth: 'user-or-key', minRole: 'viewer', scope: 'workflows:read' };
    const WRITE = { auth: 'user-or-key', minRole: 'member', scope: 'workflows:write' };
    const EXECUTE = { auth: 'user-or-key', minRole: 'member', scope: 'workflows:execute' };
    const rows = Object.fromEntries(Object.entries(POLICIES).filter(([key]) => key.includes(' /workflows')));
    expect(rows).toEqual({
      'GET /workflows': READ,
      'POST /workflows': WRITE,
      'GET /workflows/:workflow_id': READ,
      'PUT /workflows/:workflow_id': WRITE,
      'DELETE /workflows/:workflow_id': WRITE,
      'POST /workflows/:workflow_id/pause': WRITE,
      'POST /workflows/:workflow_id/resume': WRITE,
      'POST /workflows/:workflow_id/execute': EXECUTE,
      'GET /workflows/:workflow_id/versions': READ,
      'GET /workflows/:workflow_id/versions/:version': READ,
      'POST /workflows/:workflow_id/versions/:version/restore': WRITE,
      'GET /workflows/:workflow_id/executions': READ,
      'GET /workflows/:workflow_id/executions/:execution_id': READ,
      'POST /workflows/:workflow_id/executions/:execution_id/cancel': EXECUTE,
      'POST /workflows/:workflow_id/executions/:execution_id/retry': EXECUTE,
      'POST /workflows/:workflow_id/executions/:execution_id/nodes/:node_id/approve': EXECUTE,
      'POST /workflows/:workflow_id/executions/:execution_id/nodes/:node_id/reject': EXECUTE,
    });
  });

  it('tells the routes without a row from the rows without a route', () => {
    const routed = Object.keys(POLICIES).filter((key) => key !== 'GET /auth/me');
    expect(routeTableDrift([...routed, 'GET /auth/nope', 'GET /auth/nope'])).toEqual({ unlisted: ['GET /auth/nope'], unrouted: ['GET /auth/me'] });
    expect(routeTableDrift(Object.keys(POLICIES))).toEqual({ unlisted: [], unrouted: [] });
  });

  it('finds rows by method and path', () => {
    expect(policyFor('get', '/auth/me')).toBe(POLICIES['GET /auth/me']);
    expect(policyFor('GET', '/auth/nope')).toBeUndefined();
    expect(policyFor('GET', 'toString')).toBeUndefined();
  });
});

describe('authorize', () => {
  const read: RoutePolicy = { auth: 'user-or-key', minRole: 'viewer', scope: 'billing:read' };
  const write: RoutePolicy = { auth: 'user-or-key', minRole: 'member', scope: 'agents:write' };

  it('orders roles viewer < member < admin < owner and rejects unknown roles', () => {
    expect(roleAtLeast('admin', 'member')).toBe(true);
    expect(roleAtLeast('member', 'admin')).toBe(false);
    expect(roleAtLeast('owner', 'owner')).toBe(true);
    expect(roleAtLeast('superuser', 'viewer')).toBe(false);
  });

  it('lets a user act by role alone', () => {
    expect(() => authorize(principal({ role: 'viewer' }), read)).not.toThrow();
    expect(forbidden(() => authorize(principal({ role: 'viewer' }), write))).toContain('member');
  });

  it('makes a key act with its creator role intersected with its scopes', () => {
    const key = (role: string, scopes: string[]) => principal({ kind: 'api_key', apiKeyId: 'key_1', role, scopes });
    expect(() => authorize(key('member', ['agents:write']), write)).not.toThrow();
    expect(forbidden(() => authorize(key('viewer', ['agents:write']), write))).toContain('role');
    expect(forbidden(() => authorize(key('owner', ['agents:read']), write))).toContain('agents:write');
    expect(() => authorize(key('member', ['*']), write)).not.toThrow();
    expect(hasScope(['*'], 'billing:read')).toBe(true);
  });

  it('keeps keys off user-only routes', () => {
    const key = principal({ kind: 'api_key', apiKeyId: 'key_1', scopes: ['*'] });
    expect(forbidden(() => authorize(key, { auth: 'user', minRole: 'viewer' }))).toContain('API keys');
  });
});
