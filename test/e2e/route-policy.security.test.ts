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
  eval_id: 'eval_01JD0000000000000000000000',
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

/**
 * The callers a row's tests need, made once and shared by a few rows: an account costs two
 * password hashes, and making seven per row took this suite minutes. No request here changes
 * anything (each is refused before any work), so rows can share them; they are spread over casts
 * only because each request counts against the owner's tenant, whose plan allows 60 a minute.
 */
interface Cast {
  api: Api;
  owner: Account;
  viewer: Account;
  stranger: Account;
  /** Keys of the owner: every scope, and one scope each for the first two scopes. */
  everything: string;
  narrow: Map<Scope, string>;
}

/** Requests a row counts against its cast's owner: 8 rows a cast stay well under 60 a minute. */
const ROWS_PER_CAST = 8;
const casts = new Map<number, Promise<Cast>>();

async function newCast(): Promise<Cast> {
  const api = new Api();
  const owner = await newAccount(api);
  const [viewer, stranger, everything, ...narrow] = await Promise.all([
    viewerIn(api, owner),
    newAccount(api),
    newApiKey(api, owner, ['*']),
    ...SCOPES.slice(0, 2).map((scope) => newApiKey(api, owner, [scope])),
  ]);
  return { api, owner, viewer, stranger, everything: everything.key, narrow: new Map(SCOPES.slice(0, 2).map((scope, index) => [scope, narrow[index]!.key])) };
}

function castOf(row: number): Promise<Cast> {
  const index = Math.floor(row / ROWS_PER_CAST);
  let cast = casts.get(index);
  if (!cast) casts.set(index, (cast = newCast()));
  return cast;
}

describe.each(ROWS.map(([key, policy], row) => [key, policy, row] as const))('%s', (key, policy, row) => {
  it('answers 401 without a credential and with a garbage one', async () => {
    const { api, owner } = await castOf(row);
    const missing = await send(api, key, undefined, { tenantId: owner.tenantId });
    expectError(missing, 401, 'unauthorized');
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expectError(await send(api, key, 'ap_live_00000000000000000000000000000000', { tenantId: owner.tenantId }), 401, 'unauthorized');
  });

  it.runIf(policy.auth === 'user')('answers 403 to an API key, whatever its scopes', async () => {
    const { api, owner, everything } = await castOf(row);
    expectError(await send(api, key, everything, { tenantId: owner.tenantId }), 403, 'forbidden');
  });

  it.runIf(policy.auth === 'user-or-key' && 'scope' in policy)('answers 403 to an API key without the scope', async () => {
    const { api, owner, narrow } = await castOf(row);
    const scope = 'scope' in policy ? policy.scope : undefined;
    expectError(await send(api, key, narrow.get(otherScope(scope)), { tenantId: owner.tenantId }), 403, 'forbidden');
  });

  it.runIf(policy.minRole !== undefined && policy.minRole !== 'viewer')('answers 403 below the role it needs', async () => {
    const { api, owner, viewer } = await castOf(row);
    expectError(await send(api, key, viewer.accessToken, { tenantId: owner.tenantId, query: { tenant_id: owner.tenantId } }), 403, 'forbidden');
  });

  it("answers 403 for a tenant_id of a tenant the caller is not in", async () => {
    const { api, owner, stranger } = await castOf(row);
    expectError(await send(api, key, owner.accessToken, { tenantId: stranger.tenantId, query: { tenant_id: stranger.tenantId } }), 403, 'forbidden');
  });

  it('answers 400 for a NUL character (%00) in a path parameter or in tenant_id, never 5xx', async () => {
    const { api, owner } = await castOf(row);
    if (key.includes(':')) expectError(await send(api, key, owner.accessToken, { tenantId: owner.tenantId, fill: 'x%00y' }), 400, 'invalid_request');
    expectError(await send(api, key, owner.accessToken, { tenantId: owner.tenantId, query: { tenant_id: 'tnt_\u0000' } }), 400, 'invalid_request');
  });
});
