import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, text, type McpTestServer } from '../../../services/agent-memory/test/support/mcp-server.js';
import { TRACKER_TOOLS } from '../../../services/agent-memory/test/support/mcp-tools.js';
import { as, expectError, ISO_MS, matching, newAccount, startHarness, type Harness } from '../support/harness.js';
import { mcpTool, newMcpTool, newTool, type ToolBody } from '../support/tools.js';

let h: Harness;
let server: McpTestServer;
beforeAll(async () => {
  // The MCP server is on loopback, which needs the development allowance; a short time-out keeps
  // the unreachable cases short.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true', TOOL_TIMEOUT_MS: '2000' });
  server = await startMcpServer({ tools: { ...TRACKER_TOOLS } });
});
afterAll(async () => {
  await server.close();
  await h.close();
});

const TOOL_ID = /^tool_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('mcp tools', () => {
  it("POST /tools lists the server's tools into discovered; GET shows them; the header is sealed and sent", async () => {
    const account = await newAccount(h.app);
    const before = server.requests.length;
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: mcpTool(server.url) });
    expect(created.statusCode, created.body).toBe(201);
    const tool = created.json<ToolBody>();
    expect(tool).toEqual({
      id: matching(TOOL_ID),
      name: 'tracker',
      description: 'The issue tracker.',
      type: 'mcp',
      config: { url: server.url, headers: { authorization: '***' }, allowed_tools: null },
      input_schema: null,
      discovered: [
        { name: 'search_issues', description: 'Finds issues by words.', input_schema: expect.objectContaining({ type: 'object', required: ['query'] }) as unknown },
        { name: 'create_issue', description: 'Opens an issue.', input_schema: expect.objectContaining({ type: 'object', required: ['title'] }) as unknown },
      ],
      requires_approval: false,
      created_at: matching(ISO_MS),
      updated_at: matching(ISO_MS),
    });
    expect(created.body).not.toContain('mcp-secret-42');
    expect(server.requests.slice(before).every((request) => request.headers.authorization === 'Bearer mcp-secret-42')).toBe(true);
    const [row] = await h.platform.sql.agents.query<{ config: unknown }>('select "config" from "tools" where "id" = $1', [tool.id]);
    expect(JSON.stringify(row!.config)).not.toContain('mcp-secret-42');

    const got = await as(h.app, account.token, { method: 'GET', url: `/api/v1/tools/${tool.id}` });
    expect(got.json()).toEqual(tool);
    // What was read can be sent back as it is: input_schema null, the header "***", discovered ignored.
    const { id: _id, created_at: _created, updated_at: _updated, ...body } = tool;
    const replaced = await as(h.app, account.token, { method: 'PUT', url: `/api/v1/tools/${tool.id}`, payload: body });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json<ToolBody>().discovered?.map((remote) => remote.name)).toEqual(['search_issues', 'create_issue']);
  });

  it('allowed_tools must name tools the server lists (422 naming the index)', async () => {
    const account = await newAccount(h.app);
    const response = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/tools',
      payload: mcpTool(server.url, { config: { url: server.url, allowed_tools: ['search_issues', 'drop_database'] } }),
    });
    const body = expectError(response, 422, 'validation_error', ['config.allowed_tools[1]']);
    expect(body.details![0]!.message).toMatch(/not a tool of the MCP server; it lists: search_issues, create_issue/);
    const allowed = await newMcpTool(h.app, account.token, server.url, { config: { url: server.url, allowed_tools: ['search_issues'] } });
    expect(allowed.config).toMatchObject({ allowed_tools: ['search_issues'] });
  });

  it('POST /tools/{tool_id}/refresh picks up what the server has now; 502 while it is away, the list kept', async () => {
    const own = await startMcpServer({ tools: { ...TRACKER_TOOLS } });
    const account = await newAccount(h.app);
    const tool = await newMcpTool(h.app, account.token, own.url);
    own.tools.set('close_issue', { description: 'Closes an issue.', run: () => text('closed') });
    const refreshed = await as(h.app, account.token, { method: 'POST', url: `/api/v1/tools/${tool.id}/refresh` });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(refreshed.json<ToolBody>().discovered?.map((remote) => remote.name)).toEqual(['search_issues', 'create_issue', 'close_issue']);

    await own.close();
    expectError(await as(h.app, account.token, { method: 'POST', url: `/api/v1/tools/${tool.id}/refresh` }), 502, 'upstream_error');
    const kept = await as(h.app, account.token, { method: 'GET', url: `/api/v1/tools/${tool.id}` });
    expect(kept.json<ToolBody>().discovered?.map((remote) => remote.name)).toEqual(['search_issues', 'create_issue', 'close_issue']);
  });

  it('a server that cannot be reached at save is 422 naming config.url', async () => {
    const gone = await startMcpServer({ tools: TRACKER_TOOLS });
    await gone.close();
    const account = await newAccount(h.app);
    const body = expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: mcpTool(gone.url) }), 422, 'validation_error', ['config.url']);
    expect(body.details![0]!.message).toMatch(/could not list the MCP server's tools: could not reach the MCP server: connection refused/);
  });

  it('refresh is for mcp tools: 409 for the others, 404 for an unknown one', async () => {
    const account = await newAccount(h.app);
    const http = await newTool(h.app, account.token);
    expectError(await as(h.app, account.token, { method: 'POST', url: `/api/v1/tools/${http.id}/refresh` }), 409, 'conflict');
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools/tool_01JAAAAAAAAAAAAAAAAAAAAAAA/refresh' }), 404, 'not_found');
  });
});
