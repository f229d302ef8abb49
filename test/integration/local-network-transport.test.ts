/**
 * The all-in-one launcher with GRPC_TRANSPORT=network: the services call each other over their
 * loopback gRPC ports instead of in process. A request that crosses every hop of a memory search
 * (gateway → identity for the token, gateway → agent-memory, agent-memory → identity) must work,
 * and so must agent-memory → workflow-runner, which starts after agent-memory and is reached by its
 * port at the first workflow tool saved.
 */
import { expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory } from './support/cleanups.js';
import { startLocalPlatformProcess } from '../e2e/harness/processes.js';
import { newAccessToken } from '../bench/platform.js';

const defer = deferredCleanups();

it('serves the API with the services calling each other over loopback gRPC', { timeout: 120_000 }, async () => {
  const dataDir = await temporaryDirectory('agent-platform-network-', defer);
  const platform = await startLocalPlatformProcess({ dataDir, env: { LOG_LEVEL: 'warn', GRPC_TRANSPORT: 'network' } });
  defer(() => platform.stop());
  const headers = { authorization: `Bearer ${await newAccessToken(platform.baseUrl)}`, 'content-type': 'application/json' };
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${platform.baseUrl}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  expect((await api('GET', '/auth/me')).status).toBe(200);
  const agent = await api('POST', '/agents', { name: 'Over the network', type: 'assistant' });
  expect(agent.status).toBe(201);
  const agentId = String(agent.body.id);
  expect((await api('POST', '/memory', { agent_id: agentId, memory_type: 'semantic', content: 'Refunds take five working days.' })).status).toBe(201);
  const search = await api('POST', '/memory/search', { agent_id: agentId, query: 'how long do refunds take', top_k: 1 });
  expect(search.status).toBe(200);
  expect(JSON.stringify(search.body)).toContain('Refunds take five working days.');
  const workflow = await api('POST', '/workflows', { name: 'Lookup', nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: 'https://api.example.com/x', method: 'GET' } }], edges: [] });
  expect(workflow.status).toBe(201);
  const tool = await api('POST', '/tools', { name: 'run_lookup', type: 'workflow', config: { workflow_id: workflow.body.id }, input_schema: { type: 'object' } });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  // A gRPC error crosses the network hop with its meaning intact.
  expect((await api('GET', '/agents/agt_00000000000000000000000000')).status).toBe(404);
});
