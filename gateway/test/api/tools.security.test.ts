import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, as, expectError, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';
import { httpTool, newTool } from '../support/tools.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
});
afterAll(async () => {
  await h.close();
});

describe('tools security', () => {
  it('a key without tools:write cannot create, change or delete; tools:read reads', async () => {
    const owner = await newAccount(h.app);
    const tool = await newTool(h.app, owner.token);
    const reader = await newApiKey(h.app, owner, ['tools:read', 'agents:write']);
    expectError(await as(h.app, reader.key, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ name: 'other' }) }), 403, 'forbidden');
    expectError(await as(h.app, reader.key, { method: 'PUT', url: `/api/v1/tools/${tool.id}`, payload: httpTool() }), 403, 'forbidden');
    expectError(await as(h.app, reader.key, { method: 'DELETE', url: `/api/v1/tools/${tool.id}` }), 403, 'forbidden');
    expectError(await as(h.app, reader.key, { method: 'POST', url: `/api/v1/tools/${tool.id}/refresh` }), 403, 'forbidden');
    expect((await as(h.app, reader.key, { method: 'GET', url: `/api/v1/tools/${tool.id}` })).statusCode).toBe(200);
    const agentsOnly = await newApiKey(h.app, owner, ['agents:read']);
    expectError(await as(h.app, agentsOnly.key, { method: 'GET', url: '/api/v1/tools' }), 403, 'forbidden');
  });

  it("another tenant's tool is 404 for every operation, and never listed", async () => {
    const owner = await newAccount(h.app);
    const stranger = await newAccount(h.app);
    const tool = await newTool(h.app, owner.token);
    const url = `/api/v1/tools/${tool.id}`;
    expectError(await as(h.app, stranger.token, { method: 'GET', url }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'PUT', url, payload: httpTool() }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'DELETE', url }), 404, 'not_found');
    expectError(await as(h.app, stranger.token, { method: 'POST', url: `${url}/refresh` }), 404, 'not_found');
    expect((await as(h.app, stranger.token, { method: 'GET', url: '/api/v1/tools' })).json<{ total: number }>().total).toBe(0);
    // Nor can an agent of the stranger's name it.
    expectError(await as(h.app, stranger.token, { method: 'POST', url: '/api/v1/agents', payload: { name: 'A', type: 'support', tools: [tool.id] } }), 422, 'validation_error', ['tools[0]']);
    expect((await as(h.app, owner.token, { method: 'GET', url })).statusCode).toBe(200);
  });

  it('viewers read tools; members and above write them', async () => {
    const owner = await newAccount(h.app);
    const viewer = await newAccount(h.app);
    const member = await newAccount(h.app);
    await addMember(h.app, owner, viewer, 'viewer');
    await addMember(h.app, owner, member, 'member');
    const tool = await newTool(h.app, owner.token);
    const inTenant = { tenant_id: owner.tenantId };
    expect((await as(h.app, viewer.token, { method: 'GET', url: '/api/v1/tools', query: inTenant })).statusCode).toBe(200);
    expectError(await as(h.app, viewer.token, { method: 'POST', url: '/api/v1/tools', query: inTenant, payload: httpTool({ name: 'by_viewer' }) }), 403, 'forbidden');
    expectError(await as(h.app, viewer.token, { method: 'DELETE', url: `/api/v1/tools/${tool.id}`, query: inTenant }), 403, 'forbidden');
    expectError(await as(h.app, viewer.token, { method: 'POST', url: `/api/v1/tools/${tool.id}/refresh`, query: inTenant }), 403, 'forbidden');
    const created = await as(h.app, member.token, { method: 'POST', url: '/api/v1/tools', query: inTenant, payload: httpTool({ name: 'by_member' }) });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('never answers a header value, in any read', async () => {
    const owner = await newAccount(h.app);
    const tool = await newTool(h.app, owner.token);
    for (const url of ['/api/v1/tools', `/api/v1/tools/${tool.id}`]) {
      const read = await as(h.app, owner.token, { method: 'GET', url });
      expect(read.statusCode).toBe(200);
      expect(read.body).not.toContain('sk-live-123');
    }
  });
});
