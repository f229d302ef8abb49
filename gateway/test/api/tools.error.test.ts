import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, expectError, newAccount, startHarness, type Harness } from '../support/harness.js';
import { startMcpServer } from '../../../services/agent-memory/test/support/mcp-server.js';
import { TRACKER_TOOLS } from '../../../services/agent-memory/test/support/mcp-tools.js';
import { httpTool, mcpTool, newTool } from '../support/tools.js';

let h: Harness;
beforeAll(async () => {
  // Without the development allowance: the outbound address policy refuses loopback and http.
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const SAFE_URL = 'https://93.184.215.14/orders';

describe('POST /tools', () => {
  it('names every field the service refuses (422)', async () => {
    const account = await newAccount(h.app);
    const response = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/tools',
      payload: httpTool({
        name: '1bad',
        description: 'x'.repeat(1_025),
        config: { url: 'https://127.0.0.1/orders', method: 'TRACE', timeout: 5 },
        input_schema: { type: 'strnig' },
      }),
    });
    const body = expectError(response, 422, 'validation_error', ['name', 'description', 'config.url', 'config.method', 'config.timeout', 'input_schema']);
    expect(body.details!.find((detail) => detail.field === 'input_schema')!.message).toMatch(/JSON Schema/);
  });

  it('refuses an http address on http or a private network, as webhooks do', async () => {
    const account = await newAccount(h.app);
    for (const url of ['http://93.184.215.14/orders', 'https://10.0.0.5/orders', 'https://169.254.169.254/latest']) {
      expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ config: { url } }) }), 422, 'validation_error', ['config.url']);
    }
  });

  it('refuses other types at the gateway', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ type: 'ftp' }) }), 422, 'validation_error', ['type']);
  });

  it("refuses an mcp server on loopback without ALLOW_PRIVATE_NETWORK_URLS, before asking it anything", async () => {
    const server = await startMcpServer({ tools: TRACKER_TOOLS });
    try {
      const account = await newAccount(h.app);
      const { port } = new URL(server.url);
      for (const url of [server.url, `https://127.0.0.1:${port}/mcp`, `https://localhost:${port}/mcp`]) {
        const body = expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: mcpTool(url) }), 422, 'validation_error', ['config.url']);
        expect(body.details![0]!.message, url).toMatch(/must be an https URL|loopback/);
      }
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('refuses input_schema and the keys of other types on an mcp tool', async () => {
    const account = await newAccount(h.app);
    const response = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/tools',
      payload: mcpTool(SAFE_URL, { input_schema: { type: 'object' }, config: { url: SAFE_URL, method: 'POST', allowed_tools: 'search_issues' } }),
    });
    // allowed_tools of the wrong shape is the gateway's to refuse; the rest the service names.
    expectError(response, 422, 'validation_error', ['config.allowed_tools']);
    const keys = await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: mcpTool(SAFE_URL, { input_schema: { type: 'object' }, config: { url: SAFE_URL, workflow_id: 'wf_x' } }) });
    expectError(keys, 422, 'validation_error', ['input_schema', 'config.workflow_id']);
  });

  it('needs input_schema, and a workflow of the tenant for a workflow tool', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ input_schema: undefined, config: { url: SAFE_URL } }) }), 422, 'validation_error', ['input_schema']);
    expectError(
      await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: { name: 'run_it', type: 'workflow', config: { workflow_id: 'wf_01JAAAAAAAAAAAAAAAAAAAAAAA' }, input_schema: {} } }),
      422,
      'validation_error',
      ['config.workflow_id'],
    );
  });

  it('answers 409 for a name taken in the tenant', async () => {
    const account = await newAccount(h.app);
    await newTool(h.app, account.token, { config: { url: SAFE_URL } });
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ config: { url: SAFE_URL } }) }), 409, 'conflict');
  });

  it('answers 400 for a body that is not JSON', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: '{', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request');
  });
});

describe('agents', () => {
  it('names unknown tool ids by index', async () => {
    const account = await newAccount(h.app);
    const tool = await newTool(h.app, account.token, { config: { url: SAFE_URL } });
    const response = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'A', type: 'support', tools: [tool.id, 'tool_unknown'] } });
    expectError(response, 422, 'validation_error', ['tools[1]']);
  });
});

describe('/tools/{tool_id}', () => {
  it('answers 404 for an unknown tool', async () => {
    const account = await newAccount(h.app);
    for (const method of ['GET', 'DELETE'] as const) {
      expectError(await as(h.app, account.token, { method, url: '/api/v1/tools/tool_01JAAAAAAAAAAAAAAAAAAAAAAA' }), 404, 'not_found');
    }
  });
});
