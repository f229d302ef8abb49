import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Api, newAccount, type Account, type ApiResponse } from './harness/client.js';
import { postForEvents } from './harness/sse.js';

interface ChatReply {
  id: string;
  session_id: string;
  usage: { total_tokens: number };
}

function expectError(response: ApiResponse<unknown>, status: number, code: string, fields?: string[]): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  const body = response.body as { error: string; message: string; details?: { field: string }[] };
  expect(body).toMatchObject({ error: code, message: expect.any(String) });
  if (fields) expect(body.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
}

async function createAgent(api: Api, account: Account): Promise<string> {
  const created = await api.post<{ id: string }>('/api/v1/agents', { token: account.accessToken, json: { name: 'Support bot', type: 'support' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

async function balance(api: Api, account: Account): Promise<number> {
  return (await api.get<{ balance: number }>('/api/v1/billing/credits', { token: account.accessToken })).body.balance;
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
    const agentId = await createAgent(api, account);
    const before = await balance(api, account);
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json }), 422, 'validation_error', fields);
    expect(await balance(api, account)).toBe(before);
    expect((await api.get(`/api/v1/agents/${agentId}/sessions`, { token: account.accessToken })).body).toMatchObject({ total: 0 });
  });

  it('takes a message of exactly 32,000 characters', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const answer = await api.post(`/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json: { message: 'lorem ipsum '.repeat(2_667).slice(0, 32_000) } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  });

  it('answers 404 for an unknown agent, an unknown session and a session that is not an id', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const auth = { token: account.accessToken };
    expectError(await api.post('/api/v1/agents/agt_01JD0000000000000000000000/chat', { ...auth, json: { message: 'hi' } }), 404, 'not_found');
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'hi', session_id: 'ses_01JD0000000000000000000000' } }), 404, 'not_found');
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'hi', session_id: 'not-a-session' } }), 404, 'not_found');
    expectError(await api.get(`/api/v1/agents/${agentId}/sessions/ses_01JD0000000000000000000000/messages`, auth), 404, 'not_found');
    expectError(await api.delete(`/api/v1/agents/${agentId}/sessions/ses_01JD0000000000000000000000`, auth), 404, 'not_found');
  });

  it("answers 404 for another agent's session of the same tenant", async () => {
    const api = new Api();
    const account = await newAccount(api);
    const [one, two] = [await createAgent(api, account), await createAgent(api, account)];
    const reply = await api.post<ChatReply>(`/api/v1/agents/${one}/chat`, { token: account.accessToken, json: { message: 'hi' } });
    expectError(await api.post(`/api/v1/agents/${two}/chat`, { token: account.accessToken, json: { message: 'hi', session_id: reply.body.session_id } }), 404, 'not_found');
  });
});

describe('credits', () => {
  it(
    'a balance below 1 refuses a turn with 402 before any model call, streamed or not; a purchase lets chatting resume',
    { timeout: 180_000 },
    async () => {
      const api = new Api();
      const account = await newAccount(api);
      const agentId = await createAgent(api, account);
      const auth = { token: account.accessToken };
      const initial = await balance(api, account);

      // Spend the welcome credits as a heavy user would: long pastes (here random base64, which
      // tokenizes densely) into one session, each turn carrying the earlier ones as context, so
      // turns grow dearer. The last turn takes what is left; the balance never goes below 0.
      let sessionId: string | undefined;
      let spent = 0;
      for (let turn = 0; spent < initial; turn += 1) {
        expect(turn, `still ${initial - spent} credits after ${turn} turns`).toBeLessThan(30);
        const message = randomBytes(24_000).toString('base64');
        const answer = await api.post<ChatReply>(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message, ...(sessionId ? { session_id: sessionId } : {}) } });
        expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
        sessionId = answer.body.session_id;
        spent += Math.max(1, Math.ceil(answer.body.usage.total_tokens / 1000));
      }
      expect(await balance(api, account)).toBe(0);
      const stored = (await api.get<{ total: number }>(`/api/v1/agents/${agentId}/sessions/${sessionId}/messages`, auth)).body.total;

      const refused = await api.post(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'One more?', session_id: sessionId } });
      expectError(refused, 402, 'insufficient_credits');
      const refusedNew = await api.post(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'A new session?' } });
      expectError(refusedNew, 402, 'insufficient_credits');
      const streamed = await postForEvents(api, `/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'Streamed?', stream: true } });
      expect(streamed.status).toBe(402);
      expect(streamed.events).toBeUndefined();
      expect(streamed.body).toMatchObject({ error: 'insufficient_credits' });

      // Nothing was stored or charged for the refused turns.
      expect((await api.get(`/api/v1/agents/${agentId}/sessions/${sessionId}/messages`, auth)).body).toMatchObject({ total: stored });
      expect((await api.get(`/api/v1/agents/${agentId}/sessions`, auth)).body).toMatchObject({ total: 1 });
      expect(await balance(api, account)).toBe(0);

      const purchase = await api.post('/api/v1/billing/purchases', { ...auth, json: { credits: 5 } });
      expect(purchase.status).toBe(201);
      const resumed = await api.post<ChatReply>(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'Back again.' } });
      expect(resumed.status).toBe(200);
      expect(await balance(api, account)).toBe(5 - Math.max(1, Math.ceil(resumed.body.usage.total_tokens / 1000)));
    },
  );
});
