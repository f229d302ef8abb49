import { randomBytes } from 'node:crypto';
import { streamChat, type AgentPlatformClient, type ChatRequest } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { expectError, expectStatus, refusalOf } from './harness/results.js';

// Without memory extraction (decisions §14.2): its model calls are charged too, after the reply,
// and the credit tests count every credit.
async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support bot', type: 'support', config: { memory_extraction: false } } }), 201).id;
}

function chat(client: AgentPlatformClient, agentId: string, body: ChatRequest) {
  return client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body });
}

async function balance(client: AgentPlatformClient): Promise<number> {
  return expectStatus(await client.GET('/api/v1/billing/credits')).balance;
}

function sessionsOf(client: AgentPlatformClient, agentId: string) {
  return client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agentId } } });
}

describe('chat validation', () => {
  it.each([
    ['a missing message', {}, ['message']],
    ['an empty message', { message: '' }, ['message']],
    ['a blank message', { message: ' \t\n ' }, ['message']],
    ['a message over 32,000 characters', { message: 'x'.repeat(32_001) }, ['message']],
    ['a message that is not a string', { message: 42 }, ['message']],
    ['stream that is not a boolean', { message: 'hi', stream: 'yes' }, ['stream']],
  ])('answers 422 for %s', async (_label, json, fields) => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(account.client);
    const before = await balance(account.client);
    // Raw: some of these bodies are ones the contract forbids (no message, one that is not a string).
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json }), 422, 'validation_error', fields);
    expect(await balance(account.client)).toBe(before);
    expect((await sessionsOf(account.client, agentId)).data).toMatchObject({ total: 0 });
  });

  it('takes a message of exactly 32,000 characters', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    expectStatus(await chat(client, agentId, { message: 'lorem ipsum '.repeat(2_667).slice(0, 32_000) }));
  });

  it('answers 404 for an unknown agent, an unknown session and a session that is not an id', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const unknownSession = { agent_id: agentId, session_id: 'ses_01JD0000000000000000000000' };
    expectError(await chat(client, 'agt_01JD0000000000000000000000', { message: 'hi' }), 404, 'not_found');
    expectError(await chat(client, agentId, { message: 'hi', session_id: 'ses_01JD0000000000000000000000' }), 404, 'not_found');
    expectError(await chat(client, agentId, { message: 'hi', session_id: 'not-a-session' }), 404, 'not_found');
    expectError(await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: unknownSession } }), 404, 'not_found');
    expectError(await client.DELETE('/api/v1/agents/{agent_id}/sessions/{session_id}', { params: { path: unknownSession } }), 404, 'not_found');
  });

  it("answers 404 for another agent's session of the same tenant", async () => {
    const { client } = await newAccount(new Api());
    const [one, two] = [await createAgent(client), await createAgent(client)];
    const reply = expectStatus(await chat(client, one, { message: 'hi' }));
    expectError(await chat(client, two, { message: 'hi', session_id: reply.session_id }), 404, 'not_found');
  });
});

describe('credits', () => {
  it(
    'a balance below 1 refuses a turn with 402 before any model call, streamed or not; a purchase lets chatting resume',
    { timeout: 180_000 },
    async () => {
      const { client } = await newAccount(new Api());
      const agentId = await createAgent(client);
      const initial = await balance(client);

      // Spend the welcome credits as a heavy user would: long pastes (here random base64, which
      // tokenizes densely) into one session, each turn carrying the earlier ones as context, so
      // turns grow dearer. The last turn takes what is left; the balance never goes below 0.
      let sessionId: string | undefined;
      let spent = 0;
      for (let turn = 0; spent < initial; turn += 1) {
        expect(turn, `still ${initial - spent} credits after ${turn} turns`).toBeLessThan(30);
        const message = randomBytes(24_000).toString('base64');
        const reply = expectStatus(await chat(client, agentId, { message, ...(sessionId ? { session_id: sessionId } : {}) }));
        sessionId = reply.session_id;
        spent += Math.max(1, Math.ceil(reply.usage.total_tokens / 1000));
      }
      expect(await balance(client)).toBe(0);
      const messages = { params: { path: { agent_id: agentId, session_id: sessionId! } } };
      const stored = expectStatus(await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', messages)).total;

      expectError(await chat(client, agentId, { message: 'One more?', session_id: sessionId }), 402, 'insufficient_credits');
      expectError(await chat(client, agentId, { message: 'A new session?' }), 402, 'insufficient_credits');
      expectError(await refusalOf(streamChat(client, agentId, { message: 'Streamed?' })), 402, 'insufficient_credits');

      // Nothing was stored or charged for the refused turns.
      expect((await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', messages)).data).toMatchObject({ total: stored });
      expect((await sessionsOf(client, agentId)).data).toMatchObject({ total: 1 });
      expect(await balance(client)).toBe(0);

      expectStatus(await client.POST('/api/v1/billing/purchases', { body: { credits: 5 } }), 201);
      const resumed = expectStatus(await chat(client, agentId, { message: 'Back again.' }));
      expect(await balance(client)).toBe(5 - Math.max(1, Math.ceil(resumed.usage.total_tokens / 1000)));
    },
  );
});
