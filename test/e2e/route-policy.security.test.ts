import { POLICIES, type RoutePolicy } from '@agent-platform/gateway';
import { SCOPES, type Scope } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { Api, newAccount, newApiKey, type Account, type ApiResponse } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';

// One shared security suite, run for every row of the gateway's route policy table (unkey's
// shared role tests): a route added to the table is covered here without a line more. Its
// requests are raw: their paths come from the table at run time, their bodies are empty on
// purpose (the guard must answer before any validation) and some carry NUL characters.
const ROWS = Object.entries(POLICIES as Record<string, RoutePolicy>).filter(([, policy]) => policy.auth !== 'none');

// Well-formed ids of things that do not exist: the guard must answer before any lookup.
const PLACEHOLDERS: Record<string, string> = {
  agent_id: 'agt_01JD0000000000000000000000',
  session_id: 'ses_01JD0000000000000000000000',
  memory_id: 'mem_01JD0000000000000000000000',
  document_id: 'doc_01JD0000000000000000000000',
  webhook_id: 'wh_01JD0000000000000000000000',
  delivery_id: 'dlv_01JD0000000000000000000000',
  key_id: 'key_01JD0000000000000000000000',
  user_id: 'usr_01JD0000000000000000000000',
  workflow_id: 'wf_01JD0000000000000000000000',
  execution_id: 'exe_01JD0000000000000000000000',
  tool_id: 'tool_01JD0000000000000000000000',
  run_id: 'run_01JD0000000000000000000000',
  dataset_id: 'ds_01JD0000000000000000000000',
  item_id: 'dsi_01JD0000000000000000000000',
  version: '1',
};

function pathOf(route: string, tenantId: string, fill?: string): string {
  return `/api/v1${route.replace(/:([a-z_]+)/g, (_match, name: string) => fill ?? (name === 'tenant_id' ? tenantId : (PLACEHOLDERS[name] ?? name)))}`;
}

function send(api: Api, key: string, token: string | undefined, options: { tenantId: string; fill?: string; query?: Record<string, string> }): Promise<ApiResponse> {
  const [method = 'GET', route = ''] = key.split(' ');
  const json = method === 'GET' || method === 'DELETE' ? undefined : {};
  return api.request(method, pathOf(route, options.tenantId, options.fill), { ...(token ? { token } : {}), ...(json ? { json } : {}), ...(options.query ? { query: options.query } : {}) });
}

/** A scope that is not the route's, so only the scope can be what refuses the key. */
function otherScope(scope: Scope | undefined): Scope {
  return SCOPES.find((candidate) => candidate !== scope)!;
}

async function viewerIn(api: Api, owner: Account): Promise<Account> {
  const viewer = await newAccount(api);
  const added = await owner.client.POST('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: owner.tenantId } }, body: { email: viewer.email, role: 'viewer' } });
  expectStatus(added, 201);
  return viewer;
}

describe.each(ROWS)('%s', (key, policy) => {
  it('answers 401 without a credential and with a garbage one', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const missing = await send(api, key, undefined, { tenantId: account.tenantId });
    expectError(missing, 401, 'unauthorized');
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expectError(await send(api, key, 'ap_live_00000000000000000000000000000000', { tenantId: account.tenantId }), 401, 'unauthorized');
  });

  it.runIf(policy.auth === 'user')('answers 403 to an API key, whatever its scopes', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const all = await newApiKey(api, owner, ['*']);
    expectError(await send(api, key, all.key, { tenantId: owner.tenantId }), 403, 'forbidden');
  });

  it.runIf(policy.auth === 'user-or-key' && 'scope' in policy)('answers 403 to an API key without the scope', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const scope = 'scope' in policy ? policy.scope : undefined;
    const narrow = await newApiKey(api, owner, [otherScope(scope)]);
    expectError(await send(api, key, narrow.key, { tenantId: owner.tenantId }), 403, 'forbidden');
  });

  it.runIf(policy.minRole !== undefined && policy.minRole !== 'viewer')('answers 403 below the role it needs', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const viewer = await viewerIn(api, owner);
    expectError(await send(api, key, viewer.accessToken, { tenantId: owner.tenantId, query: { tenant_id: owner.tenantId } }), 403, 'forbidden');
  });

  it("answers 403 for a tenant_id of a tenant the caller is not in", async () => {
    const api = new Api();
    const [caller, stranger] = [await newAccount(api), await newAccount(api)];
    expectError(await send(api, key, caller.accessToken, { tenantId: stranger.tenantId, query: { tenant_id: stranger.tenantId } }), 403, 'forbidden');
  });

  it('answers 400 for a NUL character (%00) in a path parameter or in tenant_id, never 5xx', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    if (key.includes(':')) expectError(await send(api, key, owner.accessToken, { tenantId: owner.tenantId, fill: 'x%00y' }), 400, 'invalid_request');
    expectError(await send(api, key, owner.accessToken, { tenantId: owner.tenantId, query: { tenant_id: 'tnt_\u0000' } }), 400, 'invalid_request');
  });
});
