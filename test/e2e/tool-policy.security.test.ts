import { TOOL_ACCESS } from '@agent-platform/agent-memory';
import { POLICIES, type RoutePolicy } from '@agent-platform/gateway';
import { ROLES, SCOPES, type Role } from '@agent-platform/kit';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, newAccount, newApiKey, type Account, type ApiResponse } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';
import { finished } from './harness/workflows.js';

// decisions §12: a tool acts with the turn's credential, never more. Driven by agent-memory's
// TOOL_ACCESS (what each tool type does on the platform, as a REST route) and run once per tool
// type that acts on the platform, against every scope a key may hold and every role: a tool's
// call, its save and an agent naming it are allowed exactly when the same credential may call the
// route directly. The suite compares the two answers; it holds no copy of the rules. Its requests
// are raw where the credential comes from the table (a member acts in the owner's tenant by
// tenant_id), as the route-policy suite's are.

type ToolType = keyof typeof TOOL_ACCESS;
const PLATFORM_TYPES = (Object.keys(TOOL_ACCESS) as ToolType[]).filter((type) => TOOL_ACCESS[type] !== undefined);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver({ json: { paid: true } });
});
afterAll(() => receiver.close());

/** Who calls: a key of the owner's, or a member of the owner's tenant (a token, acting there by tenant_id). */
interface Caller {
  label: string;
  credential: string;
  tenantId: string;
}

/** A tool of one type that acts on the platform, armed in the owner's tenant, and how to see what it did. */
interface Armed {
  /** The tool's name, also what the offline model is told to call. */
  name: string;
  body: Record<string, unknown>;
  /** The route TOOL_ACCESS names for the type, called directly: its HTTP status. */
  direct(api: Api, caller: Caller): Promise<number>;
  /** How many times a tool call of this type has acted (seen on the platform, not told by the call). */
  acted(): Promise<number>;
}

/** One per tool type that acts on the platform; a type TOOL_ACCESS gains without one here fails below. */
const FIXTURES: Partial<Record<ToolType, (api: Api, owner: Account) => Promise<Armed>>> = {
  async workflow(api, owner) {
    const path = `/payout/${owner.tenantId}`;
    const workflow = expectStatus(
      await owner.client.POST('/api/v1/workflows', {
        body: { name: 'Payout', nodes: [{ id: 'pay', type: 'integration', config: { service: 'http', url: receiver.url(path), method: 'POST' } }], edges: [] },
      }),
      201,
    );
    return {
      name: 'payout',
      body: { name: 'payout', description: 'Pays out.', type: 'workflow', config: { workflow_id: workflow.id }, input_schema: { type: 'object' } },
      async direct(client, caller) {
        const answer = await client.post(`/api/v1/workflows/${workflow.id}/execute`, { token: caller.credential, query: { tenant_id: caller.tenantId }, json: { input: {}, async: false } });
        return answer.status;
      },
      async acted() {
        const executions = expectStatus(await owner.client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: workflow.id }, query: { limit: 100 } } }));
        return executions.items.filter((execution) => execution.trigger === 'tool').length;
      },
    };
  },
  async agent(api, owner) {
    const helper = expectStatus(await owner.client.POST('/api/v1/agents', { body: { name: 'Helper', type: 'assistant', config: { memory_extraction: false } } }), 201);
    return {
      name: 'ask_helper',
      body: { name: 'ask_helper', description: 'Asks the helper.', type: 'agent', config: { agent_id: helper.id }, input_schema: { type: 'object' } },
      async direct(client, caller) {
        const answer = await client.post(`/api/v1/agents/${helper.id}/chat`, { token: caller.credential, query: { tenant_id: caller.tenantId }, json: { message: 'hi' } });
        return answer.status;
      },
      async acted() {
        const runs = expectStatus(await owner.client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: helper.id }, query: { trigger: 'agent' } } }));
        return runs.total;
      },
    };
  },
};

async function memberOf(api: Api, owner: Account, role: Role): Promise<Caller> {
  if (role === 'owner') return { label: 'the owner', credential: owner.accessToken, tenantId: owner.tenantId };
  const member = await newAccount(api);
  expectStatus(await owner.client.POST('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: owner.tenantId } }, body: { email: member.email, role } }), 201);
  return { label: `a ${role}`, credential: member.accessToken, tenantId: owner.tenantId };
}

/** Every scope a key may hold, each with agents:write (to chat) or tools:write (to save a tool). */
const SCOPE_SETS = [...SCOPES, '*'] as const;

async function keyOf(api: Api, owner: Account, scopes: string[]): Promise<Caller> {
  const unique = [...new Set(scopes)] as Parameters<typeof newApiKey>[2];
  const key = await newApiKey(api, owner, unique);
  return { label: `a key with ${unique.join(' ')}`, credential: key.key, tenantId: owner.tenantId };
}

function send(api: Api, method: string, path: string, caller: Caller, json?: unknown): Promise<ApiResponse> {
  return api.request(method, path, { token: caller.credential, query: { tenant_id: caller.tenantId }, ...(json === undefined ? {} : { json }) });
}

const allowed = (status: number) => status >= 200 && status < 300;

interface ToolCallBody {
  name: string;
  status: string;
  error: string | null;
  error_code: string | null;
}

it('names, for every tool type that acts on the platform, a route whose row has the same rule, and arms one here', () => {
  expect(PLATFORM_TYPES.length).toBeGreaterThan(0);
  for (const type of PLATFORM_TYPES) {
    const action = TOOL_ACCESS[type]!;
    const row = (POLICIES as Record<string, RoutePolicy>)[action.route];
    expect(row, `${type}: ${action.route}`).toEqual({ auth: 'user-or-key', minRole: action.rule.role, scope: action.rule.scope });
    expect(FIXTURES[type], `a fixture for ${type} tools`).toBeDefined();
  }
});

/** A fresh tenant (each case its own, so the plan's rate limit is each one's) with the tool armed on an agent. */
async function armedTenant(type: ToolType): Promise<{ api: Api; owner: Account; armed: Armed; toolId: string; agentId: string }> {
  const api = new Api();
  const owner = await newAccount(api);
  const armed = await FIXTURES[type]!(api, owner);
  const toolId = expectStatus(await owner.client.POST('/api/v1/tools', { body: armed.body as never }), 201).id;
  const agentId = expectStatus(await owner.client.POST('/api/v1/agents', { body: { name: 'Treasurer', type: 'finance', tools: [toolId] } }), 201).id;
  return { api, owner, armed, toolId, agentId };
}

describe.each(PLATFORM_TYPES)('a %s tool', (type) => {
  const callers: { label: string; make: (api: Api, owner: Account) => Promise<Caller> }[] = [
    ...SCOPE_SETS.map((scope) => ({ label: `a key with agents:write and ${scope}`, make: (api: Api, owner: Account) => keyOf(api, owner, ['agents:write', scope]) })),
    ...ROLES.map((role) => ({ label: `a ${role}`, make: (api: Api, owner: Account) => memberOf(api, owner, role) })),
  ];

  it.each(callers)('called in a turn by $label: runs exactly when the caller may call its route directly, else a forbidden tool error and nothing runs', async ({ make }) => {
    const { api, owner, armed, agentId } = await armedTenant(type);
    const caller = await make(api, owner);
    const direct = await armed.direct(api, caller);
    const before = await armed.acted();
    const turn = await send(api, 'POST', `/api/v1/agents/${agentId}/chat`, caller, { message: `${armed.name} {}` });
    if (caller.label === 'a viewer') {
      // The chat route itself refuses a viewer: nothing to compare, and nothing ran.
      expect(turn.status, JSON.stringify(turn.body)).toBe(403);
      expect(await armed.acted()).toBe(before);
      return;
    }
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    const [call] = turn.body.tool_calls as ToolCallBody[];
    if (allowed(direct)) {
      expect(call).toMatchObject({ name: armed.name, status: 'completed', error_code: null });
      expect(await armed.acted()).toBe(before + 1);
    } else {
      expect(direct).toBe(403);
      expect(call).toMatchObject({ name: armed.name, status: 'failed', error_code: 'forbidden', error: expect.stringContaining(TOOL_ACCESS[type]!.rule.scope) as unknown });
      expect(await armed.acted()).toBe(before);
    }
  });

  it.each(SCOPE_SETS)('saved by a key with %s beside tools:write or agents:write: allowed exactly when that key may call its route', async (scope) => {
    const { api, owner, armed, toolId, agentId } = await armedTenant(type);
    // Each key is held to what it may do itself: an agent tool's route needs agents:write, which the agent writer has.
    const toolWriter = await keyOf(api, owner, ['tools:write', scope]);
    const toolWriterMay = allowed(await armed.direct(api, toolWriter));
    const created = await send(api, 'POST', '/api/v1/tools', toolWriter, { ...armed.body, name: `${armed.name}_${scope.replace(/\W/g, '_')}` });
    expect(created.status, JSON.stringify(created.body)).toBe(toolWriterMay ? 201 : 403);
    const replaced = await send(api, 'PUT', `/api/v1/tools/${toolId}`, toolWriter, armed.body);
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(toolWriterMay ? 200 : 403);

    const agentWriter = await keyOf(api, owner, ['agents:write', scope]);
    const agentWriterMay = allowed(await armed.direct(api, agentWriter));
    const agent = await send(api, 'POST', '/api/v1/agents', agentWriter, { name: 'Armed', type: 'finance', tools: [toolId] });
    expect(agent.status, JSON.stringify(agent.body)).toBe(agentWriterMay ? 201 : 403);
    if (!agentWriterMay) expect(agent.body.message).toMatch(/^tools\[0\] \(/);
    // An agent that holds the tool already is not re-prompted by a credential that may not use it either.
    const patched = await send(api, 'PATCH', `/api/v1/agents/${agentId}`, agentWriter, { description: `touched with ${scope}` });
    expect(patched.status, JSON.stringify(patched.body)).toBe(agentWriterMay ? 200 : 403);
  });
});

describe('the leaked key of the report (decisions §12)', () => {
  it('with agents and tools scopes but not workflows:execute, reaches nothing through a workflow tool', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const armed = await FIXTURES.workflow!(api, owner);
    const leaked = await keyOf(api, owner, ['agents:read', 'agents:write', 'tools:read', 'tools:write']);
    const path = `/payout/${owner.tenantId}`;

    expect(await armed.direct(api, leaked)).toBe(403);
    expectError(await send(api, 'POST', '/api/v1/tools', leaked, armed.body), 403, 'forbidden');
    // The owner arms an agent; the key may chat with it, but its payout call is refused.
    const tool = expectStatus(await owner.client.POST('/api/v1/tools', { body: armed.body as never }), 201);
    expectError(await send(api, 'POST', '/api/v1/agents', leaked, { name: 'Payouts', type: 'finance', tools: [tool.id] }), 403, 'forbidden');
    const agent = expectStatus(await owner.client.POST('/api/v1/agents', { body: { name: 'Payouts', type: 'finance', tools: [tool.id] } }), 201);
    const turn = await send(api, 'POST', `/api/v1/agents/${agent.id}/chat`, leaked, { message: 'payout {}' });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    expect(turn.body.tool_calls).toMatchObject([{ name: 'payout', status: 'failed', error_code: 'forbidden' }]);
    const messages = await send(api, 'GET', `/api/v1/agents/${agent.id}/sessions/${String(turn.body.session_id)}/messages`, leaked);
    const given = (messages.body.items as { role: string; content: string }[]).find((message) => message.role === 'tool');
    expect(JSON.parse(given!.content)).toMatchObject({ error_code: 'forbidden' });

    // The sentinel: the owner's own call reaches the endpoint, and is the only one that ever did.
    const own = expectStatus(await owner.client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message: 'payout {}' } }));
    expect(own.tool_calls).toMatchObject([{ status: 'completed' }]);
    await receiver.waitFor(1, { match: (request) => request.path === path, timeoutMs: 10_000 });
    expect(receiver.received(path)).toHaveLength(1);
  });

  it('an approval runs the call as the approver, who needs the scope: refused, the call still waits for one who has it', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const armed = await FIXTURES.workflow!(api, owner);
    const tool = expectStatus(await owner.client.POST('/api/v1/tools', { body: { ...armed.body, requires_approval: true } as never }), 201);
    const agent = expectStatus(await owner.client.POST('/api/v1/agents', { body: { name: 'Payouts', type: 'finance', tools: [tool.id] } }), 201);
    const chatOnly = await keyOf(api, owner, ['agents:write']);
    const paused = await send(api, 'POST', `/api/v1/agents/${agent.id}/chat`, chatOnly, { message: 'payout {}' });
    expect(paused.body).toMatchObject({ status: 'awaiting_approval' });
    const [call] = paused.body.tool_calls as { id: string }[];
    const decision = (verdict: string) => `/api/v1/agents/${agent.id}/sessions/${String(paused.body.session_id)}/tool-calls/${call!.id}/${verdict}`;

    expect(expectError(await send(api, 'POST', decision('approve'), chatOnly, {}), 403, 'forbidden').message).toContain('workflows:execute');
    expect(await armed.acted()).toBe(0);
    const approver = await keyOf(api, owner, ['agents:write', 'workflows:execute']);
    const approved = await send(api, 'POST', decision('approve'), approver, {});
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.tool_calls).toMatchObject([{ id: call!.id, status: 'completed', error_code: null }]);
    expect(await armed.acted()).toBe(1);
  });

  it("through a workflow it saved: the agent node chats as that key, so the agent's workflow tool still needs workflows:execute", async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const armed = await FIXTURES.workflow!(api, owner);
    const tool = expectStatus(await owner.client.POST('/api/v1/tools', { body: armed.body as never }), 201);
    const agent = expectStatus(await owner.client.POST('/api/v1/agents', { body: { name: 'Payouts', type: 'finance', tools: [tool.id] } }), 201);
    // May chat and author workflows, may not execute them: a webhook would run its workflow for it.
    const author = await keyOf(api, owner, ['agents:write', 'workflows:read', 'workflows:write']);
    const graph = (message: string) => ({
      nodes: [
        { id: 'in', type: 'webhook', config: { path: '/go' } },
        { id: 'ask', type: 'agent', config: { agent_id: agent.id, message } },
      ],
      edges: [{ source: 'in', target: 'ask' }],
    });
    const saved = await send(api, 'POST', '/api/v1/workflows', author, { name: 'Relay', ...graph('payout') });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const workflowId = String(saved.body.id);
    expect((await send(api, 'POST', `/api/v1/workflows/${workflowId}/resume`, author)).status).toBe(200);
    const hook = new URL(String(saved.body.webhook_url)).pathname;

    const run = async () => {
      const accepted = await api.post<{ execution_id: string }>(hook, { json: {} });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
      return finished(api, owner, workflowId, accepted.body.execution_id);
    };
    const first = await run();
    expect(first.status).toBe('completed');
    const sessionId = (first.node_executions.find((node) => node.node_id === 'ask')!.output as { session_id: string }).session_id;
    const messages = expectStatus(await owner.client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agent.id, session_id: sessionId } } }));
    expect(messages.items.find((message) => message.role === 'assistant' && message.tool_calls.length > 0)?.tool_calls).toMatchObject([{ name: 'payout', status: 'failed', error_code: 'forbidden' }]);
    expect(await armed.acted()).toBe(0);

    // The sentinel: saved again by the owner, who may execute, the same relay pays out.
    expectStatus(await owner.client.PUT('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } }, body: graph('payout now') as never }));
    expect((await run()).status).toBe('completed');
    expect(await armed.acted()).toBe(1);
  });
});
