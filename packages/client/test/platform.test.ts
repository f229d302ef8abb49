import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { startTestPlatform, type TestPlatform } from '../../../test/support/platform.js';
import { streamChat, type ChatStreamEvent } from '../src/chat-stream.js';
import { followRun, type RunEvent } from '../src/run-events.js';
import { createClient, type AgentPlatformClient } from '../src/client.js';
import { verifyWebhook, WebhookVerificationError } from '../src/webhooks.js';

// The client against the whole platform, assembled in this process as `pnpm start` assembles it.
let platform: TestPlatform;
let receiver: Receiver;
beforeAll(async () => {
  // Webhooks may target the local receiver (http, loopback).
  [platform, receiver] = await Promise.all([startTestPlatform({ ALLOW_PRIVATE_NETWORK_URLS: 'true' }), startReceiver()]);
}, 60_000);
afterAll(async () => {
  await platform?.stop();
  await receiver?.close();
});

const PASSWORD = 'correct horse battery staple';

async function newAccount(): Promise<{ client: AgentPlatformClient; email: string; tenantId: string }> {
  const anonymous = createClient({ baseUrl: platform.url });
  const email = `client-${randomUUID()}@example.com`;
  const registered = await anonymous.POST('/api/v1/auth/register', { body: { email, password: PASSWORD } });
  expect(registered.response.status, JSON.stringify(registered.error)).toBe(201);
  const login = await anonymous.POST('/api/v1/auth/login', { body: { username: email, password: PASSWORD } });
  expect(login.response.status, JSON.stringify(login.error)).toBe(200);
  return { client: createClient({ baseUrl: platform.url, accessToken: login.data!.access_token }), email, tenantId: registered.data!.tenant_id };
}

async function createAgent(client: AgentPlatformClient, name: string): Promise<string> {
  const created = await client.POST('/api/v1/agents', { body: { name, type: 'assistant' } });
  expect(created.response.status, JSON.stringify(created.error)).toBe(201);
  return created.data!.id;
}

describe('the client against the platform', () => {
  it('authenticates with an access token and with an API key, and reads errors as the API answers them', async () => {
    const { client, email } = await newAccount();
    const me = await client.GET('/api/v1/auth/me');
    expect(me.data).toMatchObject({ email, is_active: true, tenants: [{ role: 'owner' }] });

    const key = await client.POST('/api/v1/auth/api-keys', { body: { name: 'client test', scopes: ['agents:read', 'agents:write'] } });
    expect(key.response.status, JSON.stringify(key.error)).toBe(201);
    const byKey = createClient({ baseUrl: platform.url, apiKey: key.data!.key });
    const agentId = await createAgent(byKey, 'Made with a key');
    const agent = await byKey.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } });
    expect(agent.data).toMatchObject({ id: agentId, name: 'Made with a key' });

    const anonymous = await createClient({ baseUrl: platform.url }).GET('/api/v1/auth/me');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error).toMatchObject({ error: 'unauthorized', message: expect.any(String) });
  });

  it('streams a chat turn: deltas that join into the completed message, then the end', async () => {
    const { client } = await newAccount();
    const agentId = await createAgent(client, 'Streamer');
    const events: ChatStreamEvent[] = [];
    for await (const event of streamChat(client, agentId, { message: 'Tell me about streaming.' })) events.push(event);

    const last = events.at(-1);
    if (last?.event !== 'message.completed') throw new Error(`the stream ended with ${JSON.stringify(last)}`);
    const deltas = events.slice(0, -1);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((event) => (event.event === 'message.delta' ? event.data.content : `<${event.event}>`)).join('')).toBe(last.data.content);
    expect(last.data).toMatchObject({ role: 'assistant', model: 'offline', session_id: expect.stringMatching(/^ses_/) });
  });

  it('follows a background run to its end, and picks its stream up after the last event when it drops', async () => {
    const { client } = await newAccount();
    const agentId = await createAgent(client, 'Worker');
    const queued = await client.POST('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } }, body: { message: 'Summarise the day.' } });
    expect(queued.response.status, JSON.stringify(queued.error)).toBe(202);
    const runId = queued.data!.id;
    const collect = async (events: AsyncIterable<RunEvent>) => {
      const seen: RunEvent[] = [];
      for await (const event of events) seen.push(event);
      return seen;
    };

    const whole = await collect(followRun(client, runId));
    const end = whole.at(-1)!;
    expect(whole[0]!.event).toBe('run.status');
    expect(end).toMatchObject({ event: 'run.completed', data: { id: runId, status: 'completed' } });
    const steps = whole.filter((event) => event.event === 'run.step');
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.map((event) => event.id)).toEqual(steps.map((_, index) => index + 1));
    if (end.event !== 'run.status') expect(end.id).toBe(steps.length + 1);

    // A stream cut right after its first step, as a proxy's time-out would: followed on from there.
    const asked: (string | null)[] = [];
    let cut = false;
    const cutting = createClient({
      baseUrl: platform.url,
      apiKey: (await client.POST('/api/v1/auth/api-keys', { body: { name: 'follower', scopes: ['agents:read'] } })).data!.key,
      fetch: async (request) => {
        const response = await fetch(request);
        if (!request.url.includes('/events')) return response;
        asked.push(request.headers.get('last-event-id'));
        if (cut) return response;
        cut = true;
        return new Response(untilFirstStep(response.body!), { status: response.status, headers: response.headers });
      },
    });
    const resumed = await collect(followRun(cutting, runId, { reconnectDelayMs: 10 }));
    expect(asked).toEqual([null, '1']);
    expect(resumed.filter((event) => event.event !== 'run.status')).toEqual(whole.filter((event) => event.event !== 'run.status'));

    const after = await collect(followRun(client, runId, { after: steps.length }));
    // Only what came after: a resumed stream does not tell the status again.
    expect(after.map((event) => event.event)).toEqual(['run.completed']);
  });

  it('verifies deliveries the webhook-dispatcher made, for a generated and a supplied secret, and rejects them tampered', async () => {
    const { client, tenantId } = await newAccount();
    const suppliedSecret = `supplied-${randomUUID()}`;
    const generated = await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/generated'), events: ['agent.created'] } });
    const supplied = await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/supplied'), events: ['agent.created'], secret: suppliedSecret } });
    expect(generated.data?.signing_secret).toMatch(/^whsec_/);
    expect(supplied.data?.signing_secret).toBe(suppliedSecret);
    const secrets: Record<string, string> = { '/generated': generated.data!.signing_secret, '/supplied': suppliedSecret };

    const agentId = await createAgent(client, 'Announced');
    const deliveries = await receiver.waitFor(2);
    expect(deliveries.map((delivery) => delivery.path).sort()).toEqual(['/generated', '/supplied']);

    for (const delivery of deliveries) {
      const secret = secrets[delivery.path]!;
      const event = verifyWebhook(delivery.body, delivery.headers, secret);
      expect(event).toMatchObject({ type: 'agent.created', tenant_id: tenantId, api_version: expect.any(String) });
      if (event.type !== 'agent.created') throw new Error(`unexpected ${event.type}`);
      expect(event.data).toMatchObject({ id: agentId, name: 'Announced', type: 'assistant' });
      expect(verifyWebhook(new TextEncoder().encode(delivery.body), new Headers(delivery.headers as Record<string, string>), secret).id).toBe(event.id);

      const tampered = delivery.body.replace('"Announced"', '"Impostor"');
      expect(tampered).not.toBe(delivery.body);
      expect(() => verifyWebhook(tampered, delivery.headers, secret)).toThrow(WebhookVerificationError);
      expect(() => verifyWebhook(delivery.body, delivery.headers, secrets[delivery.path === '/generated' ? '/supplied' : '/generated']!)).toThrow(WebhookVerificationError);
    }
  });
});

/** The stream's text up to the end of its first `run.step` event, then closed, as a dropped connection leaves it. */
function untilFirstStep(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      text += value ?? '';
      const step = text.indexOf('event: run.step');
      const end = step < 0 ? -1 : text.indexOf('\n\n', step);
      if (done || end >= 0) {
        controller.enqueue(new TextEncoder().encode(end >= 0 ? text.slice(0, end + 2) : text));
        controller.close();
        await reader.cancel();
      }
    },
  });
}
