import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { createClient } from './client.js';
import type { ApiError, ChatMessage, User } from './types.js';

const ME: User = { id: 'usr_1', email: 'ada@example.com', full_name: 'Ada', is_active: true, created_at: '2026-01-02T03:04:05.006Z', tenants: [] };

let server: Receiver;
beforeAll(async () => {
  server = await startReceiver((request) => {
    if (request.path.startsWith('/api/v1/agents/agt_missing')) return { status: 404, json: { error: 'not_found', message: 'Agent not found' } };
    return { json: request.path === '/api/v1/auth/me' ? ME : { path: request.path, echo: JSON.parse(request.body || 'null') as unknown } };
  });
});
afterAll(() => server.close());

describe('createClient', () => {
  it('sends an API key as a bearer credential', async () => {
    const client = createClient({ baseUrl: server.url(), apiKey: 'ap_live_0123456789abcdefghijklmnopqrstuv' });
    const { data, error } = await client.GET('/api/v1/auth/me');
    expect(error).toBeUndefined();
    expect(data).toEqual(ME);
    expectTypeOf(data).toEqualTypeOf<User | undefined>();
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer ap_live_0123456789abcdefghijklmnopqrstuv');
  });

  it('sends an access token as a bearer credential', async () => {
    const client = createClient({ baseUrl: server.url(), accessToken: 'eyJhbGciOiJFZERTQSJ9.e30.sig' });
    await client.GET('/api/v1/auth/me');
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer eyJhbGciOiJFZERTQSJ9.e30.sig');
  });

  it('sends no Authorization header without a credential, and refuses two', async () => {
    await createClient({ baseUrl: server.url() }).GET('/api/v1/auth/me');
    expect(server.requests.at(-1)?.headers).not.toHaveProperty('authorization');
    expect(() => createClient({ baseUrl: server.url(), apiKey: 'a', accessToken: 'b' })).toThrow(TypeError);
  });

  it('fills path parameters, sends JSON bodies, and goes through the given fetch', async () => {
    const seen: string[] = [];
    const client = createClient({
      baseUrl: server.url('/'),
      apiKey: 'ap_live_key',
      fetch: (request) => {
        seen.push(`${request.method} ${request.url}`);
        return fetch(request);
      },
    });
    const { data } = await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: 'agt_01' } }, body: { message: 'héllo' } });
    expectTypeOf(data).toEqualTypeOf<ChatMessage | undefined>();
    expect(seen).toEqual([`POST ${server.url('/api/v1/agents/agt_01/chat')}`]);
    const request = server.requests.at(-1)!;
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ message: 'héllo' });
  });

  it('answers an error status with the typed error body', async () => {
    const { data, error, response } = await createClient({ baseUrl: server.url(), apiKey: 'ap_live_key' }).GET('/api/v1/agents/{agent_id}', {
      params: { path: { agent_id: 'agt_missing' } },
    });
    expectTypeOf(error).toEqualTypeOf<ApiError | undefined>();
    expect(response.status).toBe(404);
    expect(data).toBeUndefined();
    expect(error).toEqual({ error: 'not_found', message: 'Agent not found' });
  });
});
