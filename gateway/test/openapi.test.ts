import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICIES } from '../src/auth/policy.js';
import { formatOpenApiDocument } from '../src/openapi/document.js';
import { startHarness, type Harness, ANY_STRING } from './support/harness.js';

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  security?: Record<string, string[]>[];
  responses: Record<string, { description?: string; content?: Record<string, { schema: unknown }> }>;
  requestBody?: { content: Record<string, unknown> };
}

interface Document {
  openapi: string;
  info: { title: string; version: string; description: string; license?: { name: string } };
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, { properties?: Record<string, unknown> }> };
}

let h: Harness;
let doc: Document;
beforeAll(async () => {
  h = await startHarness();
  const response = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = response.json<Document>();
});
afterAll(async () => {
  await h.close();
});

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);
const UNDOCUMENTED = new Set(['GET /mcp', 'DELETE /mcp']);

function operations(): [string, string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]): [string, string, Operation] => [method.toUpperCase(), path, operation]),
  );
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is the committed openapi.json (`pnpm openapi` writes it)', async () => {
    const committed = await readFile(new URL('../../openapi.json', import.meta.url), 'utf8');
    expect(formatOpenApiDocument(doc) === committed, "openapi.json is out of date: run 'pnpm openapi'").toBe(true);
  });

  it('lists every route of the policy table once, under /api/v1, and nothing under /v1', () => {
    const listed = operations().map(([method, path]) => `${method} ${path}`).sort();
    const expected = [
      // Routes that only refuse (405: a stateless MCP server has no event stream and no session) are no operations.
      ...Object.keys(POLICIES).filter((key) => !UNDOCUMENTED.has(key)).map((key) => {
        const [method = '', path = ''] = key.split(' ');
        return `${method} /api/v1${path.replace(/:(\w+)/g, '{$1}')}`;
      }),
      'GET /healthz',
      'GET /readyz',
    ].sort();
    expect(listed).toEqual(expected);
    expect(new Set(listed).size).toBe(listed.length);
    expect(doc.info.description).toContain('`/v1` is an exact alias');
  });

  it('has a title, a version, a licence, tags, the two bearer schemes and the shared Error schema', () => {
    expect(doc.info.title).toBe('Agent Platform API');
    expect(doc.info.version).toEqual(ANY_STRING);
    expect(doc.info.license?.name).toEqual(ANY_STRING);
    expect(doc.components.securitySchemes['bearerAuth']).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.securitySchemes['apiKeyAuth']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.components.schemas['Error']?.properties ?? {}).sort()).toEqual(['details', 'error', 'message', 'retry_after']);
    const tags = new Set(doc.tags.map((tag) => tag.name));
    for (const [method, path, operation] of operations()) {
      expect(operation.tags?.length, `${method} ${path}`).toBe(1);
      expect(tags.has(operation.tags?.[0] ?? ''), `${method} ${path}`).toBe(true);
    }
  });

  it('documents each webhook route once, with its request and success schemas', () => {
    const webhookOps = operations().filter(([, path]) => path.startsWith('/api/v1/webhooks'));
    expect(webhookOps.map(([method, path]) => `${method} ${path}`).sort()).toEqual([
      'DELETE /api/v1/webhooks/{webhook_id}',
      'GET /api/v1/webhooks',
      'GET /api/v1/webhooks/{webhook_id}',
      'GET /api/v1/webhooks/{webhook_id}/deliveries',
      'GET /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
      'PATCH /api/v1/webhooks/{webhook_id}',
      'POST /api/v1/webhooks',
      'POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry',
      'POST /api/v1/webhooks/{webhook_id}/enable',
      'POST /api/v1/webhooks/{webhook_id}/rotate-secret',
      'POST /api/v1/webhooks/{webhook_id}/test',
    ]);
    for (const [method, path, operation] of webhookOps) expect(operation.tags, `${method} ${path}`).toEqual(['webhooks']);
    const op = (method: string, path: string) => doc.paths[`/api/v1/webhooks${path}`]?.[method];
    for (const [method, path] of [['post', ''], ['patch', '/{webhook_id}'], ['post', '/{webhook_id}/test']] as const) {
      expect(Object.keys(op(method, path)?.requestBody?.content ?? {}), `${method} ${path}`).toEqual(['application/json']);
    }
    expect(JSON.stringify(op('post', '')?.responses['201'])).toContain('signing_secret');
    expect(JSON.stringify(op('get', '/{webhook_id}')?.responses['200'])).toContain('#/components/schemas/Webhook"');
    expect(JSON.stringify(op('get', '/{webhook_id}')?.responses['200']?.content)).not.toContain('signing_secret');
    expect(JSON.stringify(op('post', '/{webhook_id}/deliveries/{delivery_id}/retry')?.responses['202'])).toContain('#/components/schemas/WebhookDelivery');
    expect(op('get', '/{webhook_id}/deliveries')?.parameters?.map((parameter) => `${parameter.in}:${parameter.name}`).sort()).toEqual([
      'path:webhook_id',
      'query:cursor',
      'query:limit',
      'query:tenant_id',
    ]);
    const delivery = doc.components.schemas['WebhookDelivery']?.properties ?? {};
    expect(Object.keys(delivery).sort()).toEqual(
      ['attempts', 'created_at', 'delivered_at', 'error', 'event_id', 'event_type', 'id', 'next_attempt_at', 'response_status', 'response_time_ms', 'status'].sort(),
    );
    expect(JSON.stringify(delivery['response_status'])).toContain('null');
    expect(JSON.stringify(op('get', '/{webhook_id}/deliveries/{delivery_id}')?.responses['200'])).toContain('#/components/schemas/WebhookDeliveryWithAttempts');
    const detailed = doc.components.schemas['WebhookDeliveryWithAttempts']?.properties ?? {};
    expect(Object.keys(detailed).sort()).toEqual([...Object.keys(delivery), 'attempt_log'].sort());
    expect(Object.keys(doc.components.schemas['WebhookDeliveryAttempt']?.properties ?? {}).sort()).toEqual(
      ['error', 'number', 'outcome', 'response_status', 'response_time_ms', 'started_at'].sort(),
    );
  });

  // Every operation of the API, each with its operationId (decisions §1; clients are generated from
  // them, so they stay), its one tag and its success statuses (comma-separated when there are two).
  const OPERATIONS = [
    ['POST', '/auth/register', 'registerUser', 'auth', '201'],
    ['POST', '/auth/login', 'login', 'auth', '200'],
    ['POST', '/auth/refresh', 'refreshToken', 'auth', '200'],
    ['GET', '/auth/me', 'getCurrentUser', 'auth', '200'],
    ['POST', '/auth/api-keys', 'createApiKey', 'api-keys', '201'],
    ['GET', '/auth/api-keys', 'listApiKeys', 'api-keys', '200'],
    ['DELETE', '/auth/api-keys/{key_id}', 'revokeApiKey', 'api-keys', '200'],
    ['GET', '/billing/credits', 'getCredits', 'billing', '200'],
    ['GET', '/billing/transactions', 'listCreditTransactions', 'billing', '200'],
    ['POST', '/billing/purchases', 'purchaseCredits', 'billing', '201'],
    ['GET', '/tenants/{tenant_id}/members', 'listTenantMembers', 'members', '200'],
    ['POST', '/tenants/{tenant_id}/members', 'addTenantMember', 'members', '201'],
    ['PATCH', '/tenants/{tenant_id}/members/{user_id}', 'updateTenantMember', 'members', '200'],
    ['DELETE', '/tenants/{tenant_id}/members/{user_id}', 'removeTenantMember', 'members', '200'],
    ['GET', '/agents', 'listAgents', 'agents', '200'],
    ['POST', '/agents', 'createAgent', 'agents', '201'],
    ['GET', '/agents/{agent_id}', 'getAgent', 'agents', '200'],
    ['PATCH', '/agents/{agent_id}', 'updateAgent', 'agents', '200'],
    ['PUT', '/agents/{agent_id}', 'replaceAgent', 'agents', '200'],
    ['DELETE', '/agents/{agent_id}', 'deleteAgent', 'agents', '200'],
    ['POST', '/agents/{agent_id}/chat', 'chatWithAgent', 'agents', '200'],
    ['GET', '/agents/{agent_id}/sessions', 'listAgentSessions', 'agents', '200'],
    ['GET', '/agents/{agent_id}/sessions/{session_id}/messages', 'listSessionMessages', 'agents', '200'],
    ['DELETE', '/agents/{agent_id}/sessions/{session_id}', 'deleteAgentSession', 'agents', '200'],
    ['POST', '/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/approve', 'approveToolCall', 'agents', '200'],
    ['POST', '/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/reject', 'rejectToolCall', 'agents', '200'],
    ['GET', '/agents/{agent_id}/runs', 'listAgentRuns', 'runs', '200'],
    ['GET', '/agents/{agent_id}/stats', 'getAgentStats', 'runs', '200'],
    ['POST', '/agents/{agent_id}/runs', 'startAgentRun', 'runs', '202'],
    ['GET', '/runs/{run_id}', 'getRun', 'runs', '200'],
    ['GET', '/runs/{run_id}/events', 'streamRunEvents', 'runs', '200'],
    ['POST', '/runs/{run_id}/cancel', 'cancelRun', 'runs', '200'],
    ['POST', '/runs/{run_id}/feedback', 'setRunFeedback', 'runs', '200'],
    ['GET', '/agents/{agent_id}/versions', 'listAgentVersions', 'agents', '200'],
    ['GET', '/agents/{agent_id}/versions/{version}', 'getAgentVersion', 'agents', '200'],
    ['POST', '/agents/{agent_id}/versions/{version}/restore', 'restoreAgentVersion', 'agents', '200'],
    ['POST', '/agents/{agent_id}/memory/consolidate', 'consolidateAgentMemory', 'memory', '200'],
    ['POST', '/memory', 'addMemory', 'memory', '201'],
    ['GET', '/memory', 'listMemory', 'memory', '200'],
    ['POST', '/memory/search', 'searchMemory', 'memory', '200'],
    ['DELETE', '/memory', 'deleteMemoryItems', 'memory', '200'],
    ['PATCH', '/memory/{memory_id}', 'updateMemory', 'memory', '200'],
    ['GET', '/memory/{memory_id}/history', 'getMemoryHistory', 'memory', '200'],
    ['DELETE', '/memory/{memory_id}', 'deleteMemory', 'memory', '200'],
    ['POST', '/memory/documents', 'addDocument', 'memory', '201,202'],
    ['GET', '/memory/documents', 'listDocuments', 'memory', '200'],
    ['GET', '/memory/documents/{document_id}', 'getDocument', 'memory', '200'],
    ['GET', '/memory/documents/{document_id}/chunks', 'listDocumentChunks', 'memory', '200'],
    ['GET', '/memory/documents/{document_id}/file', 'getDocumentFile', 'memory', '200'],
    ['POST', '/memory/documents/{document_id}/refresh', 'refreshDocument', 'memory', '202'],
    ['DELETE', '/memory/documents/{document_id}', 'deleteDocument', 'memory', '200'],
    ['GET', '/tools', 'listTools', 'tools', '200'],
    ['POST', '/tools', 'createTool', 'tools', '201'],
    ['GET', '/tools/{tool_id}', 'getTool', 'tools', '200'],
    ['PUT', '/tools/{tool_id}', 'replaceTool', 'tools', '200'],
    ['DELETE', '/tools/{tool_id}', 'deleteTool', 'tools', '200'],
    ['POST', '/tools/{tool_id}/refresh', 'refreshTool', 'tools', '200'],
    ['POST', '/datasets', 'createDataset', 'datasets', '201'],
    ['GET', '/datasets', 'listDatasets', 'datasets', '200'],
    ['GET', '/datasets/{dataset_id}', 'getDataset', 'datasets', '200'],
    ['DELETE', '/datasets/{dataset_id}', 'deleteDataset', 'datasets', '200'],
    ['POST', '/datasets/{dataset_id}/items', 'addDatasetItems', 'datasets', '201'],
    ['GET', '/datasets/{dataset_id}/items', 'listDatasetItems', 'datasets', '200'],
    ['DELETE', '/datasets/{dataset_id}/items/{item_id}', 'deleteDatasetItem', 'datasets', '200'],
    ['POST', '/evals', 'createEval', 'evals', '202'],
    ['GET', '/evals', 'listEvals', 'evals', '200'],
    ['GET', '/evals/compare', 'compareEvals', 'evals', '200'],
    ['GET', '/evals/{eval_id}', 'getEval', 'evals', '200'],
    ['GET', '/evals/{eval_id}/results', 'listEvalResults', 'evals', '200'],
    ['GET', '/webhooks', 'listWebhooks', 'webhooks', '200'],
    ['POST', '/webhooks', 'createWebhook', 'webhooks', '201'],
    ['GET', '/webhooks/{webhook_id}', 'getWebhook', 'webhooks', '200'],
    ['PATCH', '/webhooks/{webhook_id}', 'updateWebhook', 'webhooks', '200'],
    ['DELETE', '/webhooks/{webhook_id}', 'deleteWebhook', 'webhooks', '200'],
    ['POST', '/webhooks/{webhook_id}/enable', 'enableWebhook', 'webhooks', '200'],
    ['POST', '/webhooks/{webhook_id}/rotate-secret', 'rotateWebhookSecret', 'webhooks', '200'],
    ['POST', '/webhooks/{webhook_id}/test', 'testWebhook', 'webhooks', '200'],
    ['GET', '/webhooks/{webhook_id}/deliveries', 'listWebhookDeliveries', 'webhooks', '200'],
    ['GET', '/webhooks/{webhook_id}/deliveries/{delivery_id}', 'getWebhookDelivery', 'webhooks', '200'],
    ['POST', '/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', 'retryWebhookDelivery', 'webhooks', '202'],
    ['GET', '/workflows', 'listWorkflows', 'workflows', '200'],
    ['POST', '/workflows', 'createWorkflow', 'workflows', '201'],
    ['GET', '/workflows/{workflow_id}', 'getWorkflow', 'workflows', '200'],
    ['PUT', '/workflows/{workflow_id}', 'updateWorkflow', 'workflows', '200'],
    ['DELETE', '/workflows/{workflow_id}', 'deleteWorkflow', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/pause', 'pauseWorkflow', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/resume', 'resumeWorkflow', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/execute', 'executeWorkflow', 'workflows', '200,202'],
    ['GET', '/workflows/{workflow_id}/versions', 'listWorkflowVersions', 'workflows', '200'],
    ['GET', '/workflows/{workflow_id}/versions/{version}', 'getWorkflowVersion', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/versions/{version}/restore', 'restoreWorkflowVersion', 'workflows', '200'],
    ['GET', '/workflows/{workflow_id}/executions', 'listWorkflowExecutions', 'workflows', '200'],
    ['GET', '/workflows/{workflow_id}/executions/{execution_id}', 'getWorkflowExecution', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/executions/{execution_id}/cancel', 'cancelWorkflowExecution', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/executions/{execution_id}/retry', 'retryWorkflowExecution', 'workflows', '202'],
    ['POST', '/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/approve', 'approveWorkflowNode', 'workflows', '200'],
    ['POST', '/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/reject', 'rejectWorkflowNode', 'workflows', '200'],
    ['POST', '/mcp', 'postMcpMessage', 'mcp', '200,202'],
  ] as const;

  it('lists exactly the operations of the table under /api/v1', () => {
    const listed = operations()
      .filter(([, path]) => path.startsWith('/api/v1/'))
      .map(([method, path]) => `${method} ${path}`)
      .sort();
    expect(listed).toEqual(OPERATIONS.map(([method, path]) => `${method} /api/v1${path}`).sort());
  });

  it.each(OPERATIONS)('%s %s has operationId, tag, summary, success and error responses', (method, path, operationId, tag, success) => {
    const operation = doc.paths[`/api/v1${path}`]?.[method.toLowerCase()];
    expect(operation?.operationId).toBe(operationId);
    expect(operation?.tags).toEqual([tag]);
    expect(operation?.summary?.length).toBeGreaterThan(10);
    const statuses = Object.keys(operation?.responses ?? {});
    expect(statuses.filter((status) => status.startsWith('2')).sort()).toEqual(success.split(','));
    for (const status of statuses.filter((candidate) => !candidate.startsWith('2'))) {
      // The MCP transport's own refusals are JSON-RPC errors (src/openapi/contract.test.ts says which).
      expect(JSON.stringify(operation?.responses[status]), status).toMatch(tag === 'mcp' ? /#\/components\/schemas\/(Error|McpTransportError)"/ : /#\/components\/schemas\/Error"/);
    }
    for (const name of path.match(/\{(\w+)\}/g) ?? []) {
      expect(operation?.parameters?.some((parameter) => parameter.in === 'path' && `{${parameter.name}}` === name), name).toBe(true);
    }
  });

  it('gives every operation that has an operationId a unique one', () => {
    const ids = operations().flatMap(([, , operation]) => (operation.operationId ? [operation.operationId] : []));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents the chat reply as JSON and as a server-sent event stream', () => {
    const ok = doc.paths['/api/v1/agents/{agent_id}/chat']?.['post']?.responses['200'];
    expect(Object.keys(ok?.content ?? {}).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(JSON.stringify(ok?.content?.['application/json'])).toContain('#/components/schemas/ChatMessage');
    const stream = JSON.stringify(ok?.content?.['text/event-stream']);
    for (const event of ['tool.call', 'tool.result', 'message.delta', 'message.completed', 'event: error']) expect(stream).toContain(event);
    expect(Object.keys(doc.components.schemas['ChatMessage']?.properties ?? {}).sort()).toEqual(
      ['citations', 'content', 'created_at', 'credits', 'id', 'memories', 'model', 'role', 'run_id', 'session_id', 'status', 'tool_calls', 'usage'].sort(),
    );
    expect(Object.keys(doc.components.schemas['Agent']?.properties ?? {}).sort()).toEqual(
      ['config', 'created_at', 'description', 'id', 'memory_extraction', 'memory_types', 'name', 'status', 'tools', 'type', 'updated_at', 'version'].sort(),
    );
  });

  it('documents GET /memory with a required agent_id', () => {
    const parameters = doc.paths['/api/v1/memory']?.['get']?.parameters;
    expect(parameters?.find((parameter) => parameter.name === 'agent_id')).toMatchObject({ in: 'query', required: true });
  });

  it('documents login as a form and as JSON', () => {
    const login = doc.paths['/api/v1/auth/login']?.['post'];
    expect(Object.keys(login?.requestBody?.content ?? {}).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
  });
});

describe('GET /docs', () => {
  it('serves the Swagger UI', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toContain('<html');
  });
});
