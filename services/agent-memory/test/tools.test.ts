import { PrincipalKind } from '@agent-platform/kit/grpc';
import { SecretBox } from '@agent-platform/kit/security';
import type { CreateToolRequest } from '@agent-platform/proto/agents/v1/tools';
import { describe, expect } from 'vitest';
import { databaseTest, expectError, newTenant, principalOf, startAgentMemory, TEST_TOOL_SECRET_KEY, type AgentMemoryHarness, type TestTenant } from './support/harness.js';
import { startMcpServer } from './support/mcp-server.js';
import { TRACKER_TOOLS } from './support/mcp-tools.js';
import { startWorkflowRunner, workflowsDatabase, type WorkflowRunnerPeer } from './support/workflow-runner.js';

// Names the outbound address policy resolves: one public, one private (decisions §8.3).
const ADDRESSES: Record<string, string> = { 'api.example.com': '93.184.215.14', 'intranet.example.com': '10.0.0.5' };
// Public when a URL is checked at save, loopback when the client connects (DNS rebinding).
let rebindLookups = 0;
const resolveHost = (host: string) => {
  const address = host === 'rebind.example.com' ? (rebindLookups++ === 0 ? '93.184.215.14' : '127.0.0.1') : ADDRESSES[host];
  if (address === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
  return Promise.resolve([{ address, family: 4 }]);
};

/**
 * agent-memory and the real workflow-runner, each on its own database. agent-memory starts first
 * and reaches the runner at its first workflow check, as in the all-in-one launcher.
 */
const test = databaseTest
  .extend('workflowsDb', { scope: 'file' }, workflowsDatabase)
  .extend('platform', { scope: 'file' }, async ({ database, workflowsDb }, { onCleanup }) => {
    let runner: WorkflowRunnerPeer | undefined;
    const service = await startAgentMemory(database, {
      resolveHost,
      workflowRunner: () => {
        if (!runner) throw new Error('workflow-runner is not up yet');
        return runner.address;
      },
    });
    try {
      runner = await startWorkflowRunner(workflowsDb.url);
    } catch (error) {
      await service.stop();
      throw error;
    }
    const started = runner;
    onCleanup(async () => {
      await service.stop();
      await started.stop();
    });
    return { service, runner: started };
  });

const SCHEMA = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

function httpTool(overrides: Partial<CreateToolRequest> & { config?: object } = {}): CreateToolRequest {
  const { config, ...rest } = overrides;
  return {
    name: 'lookup_order',
    description: 'Finds an order by its number.',
    type: 'http',
    configJson: JSON.stringify(config ?? { url: 'https://api.example.com/orders', headers: { Authorization: 'Bearer sk-live-123' } }),
    inputSchemaJson: JSON.stringify(SCHEMA),
    ...rest,
  };
}

async function create(service: AgentMemoryHarness, tenant: TestTenant, request: CreateToolRequest = httpTool()) {
  return (await service.tools.createTool(request, { principal: tenant.principal })).tool!;
}

describe('tools', () => {
  test('an http tool: method POST by default, header values answered "***" and stored sealed', async ({ platform: { service }, database }) => {
    const tenant = newTenant();
    const tool = await create(service, tenant);
    expect(tool).toMatchObject({ name: 'lookup_order', type: 'http', requiresApproval: false, description: 'Finds an order by its number.' });
    expect(tool.id).toMatch(/^tool_[0-9A-Z]{26}$/);
    expect(JSON.parse(tool.configJson)).toEqual({ url: 'https://api.example.com/orders', method: 'POST', headers: { Authorization: '***' } });
    expect(JSON.parse(tool.inputSchemaJson)).toEqual(SCHEMA);

    const [row] = await database.query<{ config: { headers: Record<string, string> }; tenant_id: string }>(`select "config", "tenant_id" from "tools" where "id" = $1`, [tool.id]);
    expect(row!.tenant_id).toBe(tenant.tenantId);
    expect(JSON.stringify(row)).not.toContain('sk-live-123');
    const sealed = row!.config.headers.Authorization!;
    expect(new SecretBox([Buffer.from(TEST_TOOL_SECRET_KEY, 'base64')]).open(sealed, `${tool.id}:authorization`)).toBe('Bearer sk-live-123');
    // Bound to its tool: the same value on another row does not open.
    expect(() => new SecretBox([Buffer.from(TEST_TOOL_SECRET_KEY, 'base64')]).open(sealed, 'tool_OTHER:authorization')).toThrow();

    const read = (await service.tools.getTool({ toolId: tool.id }, { principal: tenant.principal })).tool!;
    expect((JSON.parse(read.configJson) as { headers: unknown }).headers).toEqual({ Authorization: '***' });
  });

  test('every field at fault is named at once', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const error = await expectError(
      service.tools.createTool(
        httpTool({
          name: 'Lookup-Order',
          description: 'x'.repeat(1_025),
          config: { url: 'https://intranet.example.com/orders', method: 'FETCH', headers: { 'bad header': 'x' }, retries: 3 },
          inputSchemaJson: JSON.stringify({ type: 'strnig' }),
        }),
        { principal: tenant.principal },
      ),
      'validation_error',
    );
    const fields = error.details.map((detail) => detail.field).sort();
    expect(fields).toEqual(['config.headers.bad header', 'config.method', 'config.retries', 'config.url', 'description', 'input_schema', 'name']);
    expect(error.details.find((detail) => detail.field === 'input_schema')!.message).toMatch(/data\/type must be equal to one of the allowed values/);
    expect(error.details.find((detail) => detail.field === 'config.url')!.message).toMatch(/private/);
  });

  test('the type is http, workflow, mcp or agent', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const error = await expectError(service.tools.createTool(httpTool({ type: 'ftp' }), { principal: tenant.principal }), 'validation_error');
    expect(error.details).toEqual([{ field: 'type', message: 'must be one of http, workflow, mcp, agent' }]);
  });

  test("an mcp server's address passes the outbound policy at save and again at connect", async ({ platform: { service }, onTestFinished }) => {
    const server = await startMcpServer({ tools: TRACKER_TOOLS });
    onTestFinished(() => server.close());
    const tenant = newTenant();
    const { port } = new URL(server.url);
    const mcpTool = (url: string) => service.tools.createTool({ name: 'tracker', type: 'mcp', configJson: JSON.stringify({ url }) }, { principal: tenant.principal });
    const cases: [string, RegExp][] = [
      [server.url, /must be an https URL/],
      [`https://127.0.0.1:${port}/mcp`, /must not point to a loopback address/],
      [`https://intranet.example.com:${port}/mcp`, /must not point to a private network address/],
      // Passes at save; the connection is refused by the guard.
      [`https://rebind.example.com:${port}/mcp`, /refused to connect: rebind\.example\.com must not point to a loopback address \(127\.0\.0\.1\)/],
    ];
    for (const [url, message] of cases) {
      const error = await expectError(mcpTool(url), 'validation_error');
      expect(error.details, url).toEqual([{ field: 'config.url', message: expect.stringMatching(message) as unknown }]);
    }
    expect(server.requests).toEqual([]);
  });

  test('input_schema is required, an object, and must compile', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const cases: [string | undefined, RegExp][] = [
      [undefined, /is required/],
      ['[1,2]', /must be an object/],
      [JSON.stringify({ $ref: '#/$defs/missing' }), /can't resolve reference/],
    ];
    for (const [inputSchemaJson, message] of cases) {
      const error = await expectError(service.tools.createTool(httpTool({ inputSchemaJson }), { principal: tenant.principal }), 'validation_error');
      expect(error.details).toEqual([{ field: 'input_schema', message: expect.stringMatching(message) as unknown }]);
    }
  });

  test('a name is unique in its tenant: 409, while another tenant may use it', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const first = await create(service, tenant);
    await expectError(service.tools.createTool(httpTool(), { principal: tenant.principal }), 'conflict');
    const second = await create(service, tenant, httpTool({ name: 'other_tool' }));
    await expectError(service.tools.replaceTool({ toolId: second.id, ...httpTool() }, { principal: tenant.principal }), 'conflict');
    expect((await create(service, newTenant())).name).toBe(first.name);
  });

  test("another tenant's tool is not found, for every operation", async ({ platform: { service } }) => {
    const owner = newTenant();
    const stranger = newTenant();
    const tool = await create(service, owner);
    const as = { principal: stranger.principal };
    await expectError(service.tools.getTool({ toolId: tool.id }, as), 'not_found');
    await expectError(service.tools.replaceTool({ toolId: tool.id, ...httpTool({ name: 'BAD NAME' }) }, as), 'not_found');
    await expectError(service.tools.deleteTool({ toolId: tool.id }, as), 'not_found');
    expect((await service.tools.listTools({ page: { page: 1, perPage: 20 } }, as)).total).toBe(0);
    expect((await service.tools.getTool({ toolId: tool.id }, { principal: owner.principal })).tool!.id).toBe(tool.id);
  });

  test('lists newest first, page by page', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const ids: string[] = [];
    for (const name of ['a_tool', 'b_tool', 'c_tool']) ids.push((await create(service, tenant, httpTool({ name }))).id);
    const first = await service.tools.listTools({ page: { page: 1, perPage: 2 } }, { principal: tenant.principal });
    const second = await service.tools.listTools({ page: { page: 2, perPage: 2 } }, { principal: tenant.principal });
    expect(first.total).toBe(3);
    expect([...first.tools, ...second.tools].map((tool) => tool.id)).toEqual(ids.reverse());
  });

  test('PUT replaces the tool; a header sent as "***" keeps its stored value', async ({ platform: { service }, database }) => {
    const tenant = newTenant();
    const tool = await create(service, tenant, httpTool({ requiresApproval: true }));
    const replaced = (
      await service.tools.replaceTool(
        { toolId: tool.id, ...httpTool({ description: undefined, config: { url: 'https://api.example.com/v2', method: 'get', headers: { Authorization: '***', 'X-Team': 'support' } } }) },
        { principal: tenant.principal },
      )
    ).tool!;
    expect(replaced).toMatchObject({ id: tool.id, requiresApproval: false, description: undefined });
    expect(JSON.parse(replaced.configJson)).toEqual({ url: 'https://api.example.com/v2', method: 'GET', headers: { Authorization: '***', 'X-Team': '***' } });
    const [row] = await database.query<{ config: { headers: Record<string, string> } }>(`select "config" from "tools" where "id" = $1`, [tool.id]);
    const box = new SecretBox([Buffer.from(TEST_TOOL_SECRET_KEY, 'base64')]);
    expect(box.open(row!.config.headers.Authorization!, `${tool.id}:authorization`)).toBe('Bearer sk-live-123');
    expect(box.open(row!.config.headers['X-Team']!, `${tool.id}:x-team`)).toBe('support');

    const unknown = await expectError(
      service.tools.replaceTool({ toolId: tool.id, ...httpTool({ config: { url: 'https://api.example.com/v2', headers: { 'X-Other': '***' } } }) }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(unknown.details.map((detail) => detail.field)).toEqual(['config.headers.X-Other']);
  });

  test('a workflow tool names a workflow of its own tenant, asked of workflow-runner', async ({ platform: { service, runner } }) => {
    const tenant = newTenant();
    const workflowId = await runner.createWorkflow(tenant);
    const workflowTool = (tenantOf: TestTenant, id: string) =>
      service.tools.createTool(
        { name: 'run_lookup', type: 'workflow', configJson: JSON.stringify({ workflow_id: id }), inputSchemaJson: JSON.stringify(SCHEMA) },
        { principal: tenantOf.principal },
      );
    const tool = (await workflowTool(tenant, workflowId)).tool!;
    expect(JSON.parse(tool.configJson)).toEqual({ workflow_id: workflowId });

    const foreign = await expectError(workflowTool(newTenant(), workflowId), 'validation_error');
    expect(foreign.details).toEqual([{ field: 'config.workflow_id', message: 'is not a workflow of this tenant' }]);
    const unknown = await expectError(workflowTool(tenant, 'wf_01JAAAAAAAAAAAAAAAAAAAAAAA'), 'validation_error');
    expect(unknown.details.map((detail) => detail.field)).toEqual(['config.workflow_id']);
    const keys = await expectError(
      service.tools.createTool({ name: 'run_it', type: 'workflow', configJson: JSON.stringify({ url: 'https://api.example.com' }), inputSchemaJson: '{}' }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(keys.details.map((detail) => detail.field).sort()).toEqual(['config.url', 'config.workflow_id']);
  });

  test('viewers and keys without tools:write cannot create; tools:read reads', async ({ platform: { service } }) => {
    const tenant = newTenant();
    await expectError(service.tools.createTool(httpTool(), { principal: principalOf(tenant.tenantId, 'viewer') }), 'forbidden');
    const reader = principalOf(tenant.tenantId, 'admin', PrincipalKind.KIND_API_KEY, ['tools:read']);
    await expectError(service.tools.createTool(httpTool(), { principal: reader }), 'forbidden');
    expect((await service.tools.listTools({ page: { page: 1, perPage: 20 } }, { principal: reader })).total).toBe(0);
  });
});

describe('agents and their tools', () => {
  test('an agent names tools of its tenant; unknown and foreign ids are named by index', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const lookup = await create(service, tenant);
    const refund = await create(service, tenant, httpTool({ name: 'refund' }));
    const foreign = await create(service, newTenant());
    const { agent } = await service.agents.createAgent({ name: 'Support', type: 'support', memoryTypes: [], tools: [lookup.id, refund.id, lookup.id] }, { principal: tenant.principal });
    expect(agent!.tools).toEqual([lookup.id, refund.id]);

    const error = await expectError(
      service.agents.createAgent({ name: 'Support', type: 'support', memoryTypes: [], tools: [lookup.id, foreign.id, 'tool_nope'] }, { principal: tenant.principal }),
      'validation_error',
    );
    expect(error.details).toEqual([
      { field: 'tools[1]', message: 'is not a tool of this tenant' },
      { field: 'tools[2]', message: 'is not a tool of this tenant' },
    ]);

    const update = (tools: string[] | undefined, replace = false) =>
      service.agents.updateAgent(
        { agentId: agent!.id, replace, name: 'Support', type: 'support', setMemoryTypes: false, memoryTypes: [], setTools: tools !== undefined, tools: tools ?? [] },
        { principal: tenant.principal },
      );
    expect((await update(undefined)).agent!.tools).toEqual([lookup.id, refund.id]);
    expect((await update([refund.id])).agent!.tools).toEqual([refund.id]);
    await expectError(update([foreign.id]), 'validation_error');
    expect((await update(undefined, true)).agent!.tools).toEqual([]);
  });

  test('deleting a tool takes it off every agent that named it', async ({ platform: { service } }) => {
    const tenant = newTenant();
    const lookup = await create(service, tenant);
    const refund = await create(service, tenant, httpTool({ name: 'refund' }));
    const agents = [];
    for (const name of ['One', 'Two']) {
      agents.push((await service.agents.createAgent({ name, type: 'support', memoryTypes: [], tools: [lookup.id, refund.id] }, { principal: tenant.principal })).agent!);
    }
    await service.tools.deleteTool({ toolId: lookup.id }, { principal: tenant.principal });
    for (const agent of agents) expect((await service.agents.getAgent({ agentId: agent.id }, { principal: tenant.principal })).agent!.tools).toEqual([refund.id]);
    await expectError(service.tools.getTool({ toolId: lookup.id }, { principal: tenant.principal }), 'not_found');
    await expectError(service.tools.deleteTool({ toolId: lookup.id }, { principal: tenant.principal }), 'not_found');
  });
});
