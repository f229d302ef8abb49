import type { Actor } from '@agent-platform/kit';
import { OutboundHttp, OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import type { TestDatabase } from '@agent-platform/kit/testing';
import type { CreateToolRequest, Tool as ToolMessage } from '@agent-platform/proto/agents/v1/tools';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { McpClient } from '../src/tools/mcp-client.js';
import { mcpCalls } from '../src/tools/kinds/mcp.js';
import { toolKindOf } from '../src/tools/kinds/tool-kinds.js';
import type { ToolCallRequest, ToolCalls } from '../src/tools/kinds/tool-kind.js';
import type { Tool } from '../src/tools/tools.entity.js';
import { agentMemoryTest, expectError, newTenant, TEST_TOOL_SECRET_KEY, type AgentMemoryHarness, type TestTenant } from './support/harness.js';
import { startMcpServer, text, type McpServerOptions, type McpTestServer } from './support/mcp-server.js';
import { mcpToolOf, TRACKER_TOOLS } from './support/mcp-tools.js';

/** What a model is offered of a stored tool, as a turn asks its kind. */
const offeredOf = (tool: Tool) => toolKindOf(tool.type).offered(tool);

// Loopback servers need the development allowance; a short time-out keeps the hanging cases short.
const TOOL_TIMEOUT_MS = 2_000;
const test = agentMemoryTest({ env: { ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS) } });

const TOKEN = 'Bearer mcp-secret-42';

/** A started server, closed when the test ends. */
async function serverFor(onTestFinished: (fn: () => Promise<void>) => void, options: McpServerOptions = { tools: TRACKER_TOOLS }): Promise<McpTestServer> {
  const server = await startMcpServer(options);
  onTestFinished(() => server.close());
  return server;
}

function mcpTool(url: string, overrides: Partial<CreateToolRequest> & { config?: object } = {}): CreateToolRequest {
  const { config, ...rest } = overrides;
  return { name: 'tracker', description: 'The issue tracker.', type: 'mcp', configJson: JSON.stringify(config ?? { url, headers: { Authorization: TOKEN } }), ...rest };
}

async function create(service: AgentMemoryHarness, tenant: TestTenant, request: CreateToolRequest): Promise<ToolMessage> {
  return (await service.tools.createTool(request, { principal: tenant.principal })).tool!;
}

const discoveredNames = (tool: ToolMessage) => tool.discovered.map((remote) => remote.name);

describe('mcp tools', () => {
  test("discovers the server's tools at create, sending the sealed headers", async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished);
    const tenant = newTenant();
    const tool = await create(service, tenant, mcpTool(server.url));
    expect(tool).toMatchObject({ type: 'mcp', inputSchemaJson: 'null' });
    expect(JSON.parse(tool.configJson)).toEqual({ url: server.url, headers: { Authorization: '***' }, allowed_tools: null });
    expect(tool.discovered.map(({ name, description }) => ({ name, description }))).toEqual([
      { name: 'search_issues', description: 'Finds issues by words.' },
      { name: 'create_issue', description: 'Opens an issue.' },
    ]);
    expect(JSON.parse(tool.discovered[0]!.inputSchemaJson)).toMatchObject({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
    // Every request of the session carried the header, as it was given.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((request) => request.headers.authorization === TOKEN)).toBe(true);

    const [row] = await database.query<{ config: { headers: Record<string, string> }; discovered: unknown[]; input_schema: unknown }>(
      `select "config", "discovered", "input_schema" from "tools" where "id" = $1`,
      [tool.id],
    );
    expect(JSON.stringify(row!.config)).not.toContain('mcp-secret-42');
    expect(new SecretBox([Buffer.from(TEST_TOOL_SECRET_KEY, 'base64')]).open(row!.config.headers.Authorization!, `${tool.id}:authorization`)).toBe(TOKEN);
    expect(row!.discovered).toHaveLength(2);
    expect(row!.input_schema).toBeNull();

    const read = (await service.tools.getTool({ toolId: tool.id }, { principal: tenant.principal })).tool!;
    expect(discoveredNames(read)).toEqual(['search_issues', 'create_issue']);
  });

  test('lists every page of tools/list', async ({ service, onTestFinished }) => {
    const tools = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((name) => [`tool_${name}`, { run: () => text(name) }]));
    const server = await serverFor(onTestFinished, { tools, pageSize: 2 });
    const tool = await create(service, newTenant(), mcpTool(server.url));
    expect(discoveredNames(tool)).toEqual(['tool_a', 'tool_b', 'tool_c', 'tool_d', 'tool_e']);
  });

  test('allowed_tools filters what the model is offered, and must name tools the server lists', async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished);
    const tenant = newTenant();
    const tool = await create(service, tenant, mcpTool(server.url, { config: { url: server.url, allowed_tools: ['search_issues', 'search_issues'] } }));
    expect(JSON.parse(tool.configJson)).toMatchObject({ allowed_tools: ['search_issues'] });
    // Discovered keeps all the server has; only the allowed are offered.
    expect(discoveredNames(tool)).toEqual(['search_issues', 'create_issue']);
    const offered = offeredOf(await mcpToolOf(database, tool.id));
    expect(offered.map(({ name, remoteName, description }) => ({ name, remoteName, description }))).toEqual([
      { name: 'tracker__search_issues', remoteName: 'search_issues', description: 'Finds issues by words.' },
    ]);
    expect(offered[0]!.parameters).toMatchObject({ type: 'object', required: ['query'] });

    const unknown = await expectError(
      service.tools.createTool(mcpTool(server.url, { name: 'other', config: { url: server.url, allowed_tools: ['create_issue', 'delete_repo'] } }), { principal: tenant.principal }),
      'validation_error',
    );
    expect(unknown.details).toEqual([{ field: 'config.allowed_tools[1]', message: 'is not a tool of the MCP server; it lists: search_issues, create_issue' }]);
    const shapes = await expectError(service.tools.createTool(mcpTool(server.url, { name: 'other', config: { url: server.url, allowed_tools: [] } }), { principal: tenant.principal }), 'validation_error');
    expect(shapes.details.map((detail) => detail.field)).toEqual(['config.allowed_tools']);
  });

  test('a discovered tool whose combined name is no function name is kept but not offered; naming it is refused', async ({ service, database, onTestFinished }) => {
    const long = `x${'y'.repeat(60)}`;
    const server = await serverFor(onTestFinished, { tools: { ...TRACKER_TOOLS, [long]: { run: () => text('long') } } });
    const tenant = newTenant();
    const tool = await create(service, tenant, mcpTool(server.url));
    expect(discoveredNames(tool)).toContain(long);
    expect(offeredOf(await mcpToolOf(database, tool.id)).map((offered) => offered.remoteName)).toEqual(['search_issues', 'create_issue']);
    const error = await expectError(
      service.tools.createTool(mcpTool(server.url, { name: 'other', config: { url: server.url, allowed_tools: [long] } }), { principal: tenant.principal }),
      'validation_error',
    );
    expect(error.details).toEqual([{ field: 'config.allowed_tools[0]', message: `cannot be offered to a model: "other__${long}" does not match ^[a-zA-Z0-9_-]{1,64}$` }]);
  });

  test('takes no input_schema, no key of another type and no header the transport sets', async ({ service, onTestFinished }) => {
    const server = await serverFor(onTestFinished);
    const error = await expectError(
      service.tools.createTool(
        mcpTool(server.url, { inputSchemaJson: '{"type":"object"}', config: { url: server.url, method: 'POST', headers: { 'Mcp-Session-Id': 'x' } } }),
        { principal: newTenant().principal },
      ),
      'validation_error',
    );
    expect(error.details.map((detail) => detail.field).sort()).toEqual(['config.headers.Mcp-Session-Id', 'config.method', 'input_schema']);
    // Refused before the server was asked.
    expect(server.requests).toEqual([]);
  });

  test('a server that cannot be reached, fails or hangs is 422 naming config.url at save', async ({ service, onTestFinished }) => {
    const tenant = newTenant();
    const gone = await startMcpServer({ tools: TRACKER_TOOLS });
    await gone.close();
    const refused = await expectError(service.tools.createTool(mcpTool(gone.url), { principal: tenant.principal }), 'validation_error');
    expect(refused.details).toEqual([{ field: 'config.url', message: "could not list the MCP server's tools: could not reach the MCP server: connection refused" }]);

    const locked = await serverFor(onTestFinished, { tools: TRACKER_TOOLS, requireAuthorization: 'Bearer another' });
    const unauthorized = await expectError(service.tools.createTool(mcpTool(locked.url), { principal: tenant.principal }), 'validation_error');
    expect(unauthorized.details).toEqual([{ field: 'config.url', message: "could not list the MCP server's tools: the MCP server answered HTTP 401" }]);

    const silent = await serverFor(onTestFinished, { silent: true });
    const hung = await expectError(service.tools.createTool(mcpTool(silent.url), { principal: tenant.principal }), 'validation_error');
    expect(hung.details).toEqual([{ field: 'config.url', message: `could not list the MCP server's tools: the MCP server did not answer within ${TOOL_TIMEOUT_MS} ms` }]);
  });

  test('refresh picks up what the server has now; a server away is upstream_error and the list stays', async ({ service, onTestFinished }) => {
    const server = await serverFor(onTestFinished, { tools: { ...TRACKER_TOOLS } });
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const tool = await create(service, tenant, mcpTool(server.url));
    server.tools.set('close_issue', { description: 'Closes an issue.', run: () => text('closed') });
    server.tools.delete('create_issue');
    const refreshed = (await service.tools.refreshTool({ toolId: tool.id }, as)).tool!;
    expect(discoveredNames(refreshed)).toEqual(['search_issues', 'close_issue']);
    expect(refreshed.updatedAt!.getTime()).toBeGreaterThanOrEqual(tool.updatedAt!.getTime());

    await server.close();
    const away = await expectError(service.tools.refreshTool({ toolId: tool.id }, as), 'upstream_error');
    expect(away.message).toMatch(/connection refused/);
    expect(discoveredNames((await service.tools.getTool({ toolId: tool.id }, as)).tool!)).toEqual(['search_issues', 'close_issue']);
  });

  test('refresh is for mcp tools of the tenant, by writers', async ({ service, onTestFinished }) => {
    const server = await serverFor(onTestFinished);
    const tenant = newTenant();
    const tool = await create(service, tenant, mcpTool(server.url));
    const http = await create(service, tenant, {
      name: 'lookup',
      type: 'http',
      configJson: JSON.stringify({ url: 'http://127.0.0.1:9/x' }),
      inputSchemaJson: '{"type":"object"}',
    });
    await expectError(service.tools.refreshTool({ toolId: http.id }, { principal: tenant.principal }), 'conflict');
    await expectError(service.tools.refreshTool({ toolId: tool.id }, { principal: newTenant().principal }), 'not_found');
    await expectError(service.tools.refreshTool({ toolId: tool.id }, { principal: { ...tenant.principal, role: 'viewer' } }), 'forbidden');
  });

  test('PUT asks the server again, with a header kept as "***"; a type change drops the list', async ({ service, onTestFinished }) => {
    const server = await serverFor(onTestFinished, { tools: { ...TRACKER_TOOLS } });
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const tool = await create(service, tenant, mcpTool(server.url));
    server.tools.delete('create_issue');
    const before = server.requests.length;
    const replaced = (await service.tools.replaceTool({ toolId: tool.id, ...mcpTool(server.url, { config: { url: server.url, headers: { Authorization: '***' } } }) }, as)).tool!;
    expect(discoveredNames(replaced)).toEqual(['search_issues']);
    expect(server.requests.slice(before).every((request) => request.headers.authorization === TOKEN)).toBe(true);

    const http = (
      await service.tools.replaceTool(
        { toolId: tool.id, name: 'tracker', type: 'http', configJson: JSON.stringify({ url: 'http://127.0.0.1:9/x', headers: { Authorization: '***' } }), inputSchemaJson: '{}' },
        as,
      )
    ).tool!;
    expect(http).toMatchObject({ type: 'http', discovered: [] });
    expect(JSON.parse(http.configJson)).toEqual({ url: 'http://127.0.0.1:9/x', method: 'POST', headers: { Authorization: '***' } });
  });
});

describe('mcp tool calls', () => {
  const CALL_TIMEOUT_MS = 500;
  const box = new SecretBox([Buffer.from(TEST_TOOL_SECRET_KEY, 'base64')]);

  /** The kind as the chat turn will hold it, its client on the same guarded HTTP as the service's. */
  function kind(onTestFinished: (fn: () => void) => void): ToolCalls {
    const http = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true }), userAgent: 'AgentPlatform-Tools-Test/1.0' });
    onTestFinished(() => http.close());
    return mcpCalls({ mcp: new McpClient({ http, timeoutMs: CALL_TIMEOUT_MS }), secrets: box });
  }

  function call(tool: Tool, remoteName: string, args: Record<string, unknown>, signal = new AbortController().signal): ToolCallRequest {
    return { actor: actorOf(tool), tool, remoteName, arguments: args, signal, requestId: undefined };
  }

  /** An mcp tool of a new tenant on `server`, as stored. */
  async function stored(service: AgentMemoryHarness, database: TestDatabase, server: McpTestServer): Promise<Tool> {
    return mcpToolOf(database, (await create(service, newTenant(), mcpTool(server.url))).id);
  }

  test('answers the text of the content, or the structured content, and sends the headers', async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished, {
      tools: {
        ...TRACKER_TOOLS,
        count_issues: { input: { label: z.string() }, output: { count: z.number() }, run: () => ({ content: [{ type: 'text', text: '{"count":3}' }], structuredContent: { count: 3 } }) },
        show_chart: { run: () => ({ content: [{ type: 'text', text: 'the chart:' }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] }) },
      },
    });
    const tool = await stored(service, database, server);
    const tools = kind(onTestFinished);
    const before = server.requests.length;
    expect(await tools.call(call(tool, 'search_issues', { query: 'refund' }))).toEqual({ status: 'completed', result: 'found: refund' });
    expect(server.requests.slice(before).every((request) => request.headers.authorization === TOKEN)).toBe(true);
    expect(await tools.call(call(tool, 'count_issues', { label: 'bug' }))).toEqual({ status: 'completed', result: { count: 3 } });
    expect(await tools.call(call(tool, 'show_chart', {}))).toEqual({
      status: 'completed',
      result: [
        { type: 'text', text: 'the chart:' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
    });
  });

  test('a tool that reports an error, or arguments the server refuses, are failed calls', async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished, {
      tools: { ...TRACKER_TOOLS, refund: { input: { order_id: z.string() }, run: () => ({ isError: true, content: [{ type: 'text', text: 'order not found' }] }) } },
    });
    const tool = await stored(service, database, server);
    const tools = kind(onTestFinished);
    expect(await tools.call(call(tool, 'refund', { order_id: '42' }))).toEqual({ status: 'failed', error: 'order not found' });
    const refused = await tools.call(call(tool, 'search_issues', { query: 7 }));
    expect(refused.status).toBe('failed');
  });

  test('runs only what the tool offers, without asking the server', async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished);
    const created = await create(service, newTenant(), mcpTool(server.url, { config: { url: server.url, allowed_tools: ['search_issues'] } }));
    const tool = await mcpToolOf(database, created.id);
    const before = server.requests.length;
    expect(await kind(onTestFinished).call(call(tool, 'create_issue', { title: 'x' }))).toEqual({ status: 'failed', error: 'tracker offers no tool named create_issue' });
    expect(server.requests.length).toBe(before);
  });

  test('fails within the time-out when the server hangs, and at once when the turn is cancelled', async ({ service, database, onTestFinished }) => {
    const entered: PromiseWithResolvers<void>[] = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
    let calls = 0;
    const server = await serverFor(onTestFinished, {
      tools: {
        ...TRACKER_TOOLS,
        // Never answers: its sentinel says the call reached it.
        slow_report: { run: () => (entered[calls++]!.resolve(), new Promise<never>(() => undefined)) },
      },
    });
    const tool = await stored(service, database, server);
    const tools = kind(onTestFinished);
    const started = performance.now();
    expect(await tools.call(call(tool, 'slow_report', {}))).toEqual({ status: 'failed', error: `the MCP server did not answer within ${CALL_TIMEOUT_MS} ms` });
    await entered[0]!.promise;
    expect(performance.now() - started).toBeLessThan(CALL_TIMEOUT_MS + 1_000);

    const turn = new AbortController();
    const cancelled = tools.call(call(tool, 'slow_report', {}, turn.signal));
    await entered[1]!.promise;
    turn.abort();
    expect(await cancelled).toEqual({ status: 'failed', error: 'the call was cancelled' });
  });

  test('ends the session of a stateful server after the call', async ({ service, database, onTestFinished }) => {
    const server = await serverFor(onTestFinished, { tools: TRACKER_TOOLS, stateful: true });
    const tool = await stored(service, database, server);
    const ended = server.ended.length;
    expect(await kind(onTestFinished).call(call(tool, 'create_issue', { title: 'Broken login' }))).toEqual({ status: 'completed', result: 'opened: Broken login' });
    expect(server.ended.length).toBe(ended + 1);
    expect(server.requests.filter((request) => request.method === 'DELETE')).toHaveLength(server.ended.length);
  });
});

function actorOf(tool: Tool): Actor {
  return { kind: 'user', userId: 'usr_test', tenantId: tool.tenantId, role: 'member', scopes: [] };
}
