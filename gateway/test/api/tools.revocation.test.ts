import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../../services/agent-memory/test/support/fake-openai.js';
import { newAgent } from '../support/agents.js';
import { as, newAccount, newApiKey, startHarness, type Account, type Harness } from '../support/harness.js';
import { newTool } from '../support/tools.js';

/**
 * decisions §12: a turn acts with the credential that started it, which is asked of identity again
 * at every tool call. A key revoked while its turn runs stops the turn's next call. The turn's
 * model is an OpenAI-compatible one (a local server speaking the protocol): it asks for one call
 * per round, so a revocation can fall between two rounds; the offline model calls only once.
 */

let h: Harness;
let llm: FakeOpenAI;
let receiver: Receiver;
beforeAll(async () => {
  llm = await startFakeOpenAI();
  receiver = await startReceiver((request) => (request.path === '/lookup' ? { hold: 'answer', json: { order: 'A-1', state: 'shipped' } } : { json: { paid: true } }));
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true', LLM_BASE_URL: llm.baseURL, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model' });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
  await llm.close();
});

interface Reply {
  status: string;
  tool_calls: { name: string; status: string; error: string | null; error_code: string | null }[];
}

/** A tenant with an agent that may look an order up (held by the receiver until released) and pay out through a workflow. */
async function armed(owner: Account): Promise<{ agentId: string; workflowId: string; payoutPath: string }> {
  const payoutPath = `/payout/${owner.tenantId}`;
  const workflow = await as(h.app, owner.token, {
    method: 'POST',
    url: '/api/v1/workflows',
    payload: { name: 'Payout', nodes: [{ id: 'pay', type: 'integration', config: { service: 'http', url: receiver.url(payoutPath), method: 'POST' } }], edges: [] },
  });
  expect(workflow.statusCode, workflow.body).toBe(201);
  const workflowId = workflow.json<{ id: string }>().id;
  const lookup = await newTool(h.app, owner.token, { name: 'lookup', config: { url: receiver.url('/lookup') }, input_schema: { type: 'object' } });
  const payout = await newTool(h.app, owner.token, { name: 'payout', type: 'workflow', config: { workflow_id: workflowId }, input_schema: { type: 'object' } });
  // Episodic memory only: no extraction asks the model between the scripted rounds.
  const agent = await newAgent(h.app, owner.token, { tools: [lookup.id, payout.id], memory_types: ['episodic'] });
  return { agentId: agent.id, workflowId, payoutPath };
}

/** The model asks for lookup, then payout, then answers: two tool rounds. */
function scriptTwoRounds(): void {
  llm.chatNext(
    { kind: 'tool-calls', calls: [{ name: 'lookup', arguments: '{}' }] },
    { kind: 'tool-calls', calls: [{ name: 'payout', arguments: '{}' }] },
    { kind: 'answer', content: 'done' },
  );
}

describe('a credential that changes during its turn', () => {
  it('runs every round while it holds; revoked after round one, the payout of round two fails unauthorized and reaches nothing', async () => {
    const owner = await newAccount(h.app);
    const { agentId, workflowId, payoutPath } = await armed(owner);
    const key = await newApiKey(h.app, owner, ['agents:write', 'workflows:execute']);
    const chat = () => as(h.app, key.key, { method: 'POST', url: `/api/v1/agents/${agentId}/chat`, payload: { message: 'look up A-1 and pay it out' } });

    // While the key holds, both rounds run: the setup can reach the payout.
    scriptTwoRounds();
    const whole = chat();
    await receiver.waitFor(1, { match: '/lookup' });
    receiver.release('/lookup');
    const held = await whole;
    expect(held.statusCode, held.body).toBe(200);
    expect(held.json<Reply>().tool_calls).toMatchObject([
      { name: 'lookup', status: 'completed' },
      { name: 'payout', status: 'completed', error_code: null },
    ]);
    expect(receiver.received(payoutPath)).toHaveLength(1);

    scriptTwoRounds();
    const revokedTurn = chat();
    await receiver.waitFor(2, { match: '/lookup' });
    const revoked = await as(h.app, owner.token, { method: 'DELETE', url: `/api/v1/auth/api-keys/${key.id}` });
    expect(revoked.statusCode, revoked.body).toBe(200);
    receiver.release('/lookup');
    const answer = await revokedTurn;
    // The turn was admitted and answers; only what came after the revocation was refused.
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json<Reply>().tool_calls).toMatchObject([
      { name: 'lookup', status: 'completed', error_code: null },
      { name: 'payout', status: 'failed', error_code: 'unauthorized' },
    ]);
    // The model was told why, with the code.
    const lastPrompt = llm.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(JSON.parse(lastPrompt.messages.at(-1)!.content)).toMatchObject({ error_code: 'unauthorized' });

    // The sentinel: the owner's own run reaches the endpoint, and is the only one after the first turn's.
    const direct = await as(h.app, owner.token, { method: 'POST', url: `/api/v1/workflows/${workflowId}/execute`, payload: { input: {}, async: false } });
    expect(direct.statusCode, direct.body).toBe(200);
    expect(receiver.received(payoutPath)).toHaveLength(2);
    const executions = await as(h.app, owner.token, { method: 'GET', url: `/api/v1/workflows/${workflowId}/executions` });
    expect(executions.json<{ items: { trigger: string }[] }>().items.map((execution) => execution.trigger)).toEqual(['manual', 'tool']);
  });

  it('a member lowered to viewer during the turn: the next call is refused as forbidden, the role being asked again', async () => {
    const owner = await newAccount(h.app);
    const { agentId, payoutPath } = await armed(owner);
    const member = await newAccount(h.app);
    const added = await as(h.app, owner.token, { method: 'POST', url: `/api/v1/tenants/${owner.tenantId}/members`, payload: { email: member.email, role: 'member' } });
    expect(added.statusCode, added.body).toBe(201);

    scriptTwoRounds();
    const turn = as(h.app, member.token, { method: 'POST', url: `/api/v1/agents/${agentId}/chat?tenant_id=${owner.tenantId}`, payload: { message: 'look up A-1 and pay it out' } });
    const seen = receiver.received('/lookup').length;
    await receiver.waitFor(seen + 1, { match: '/lookup' });
    const lowered = await as(h.app, owner.token, { method: 'PATCH', url: `/api/v1/tenants/${owner.tenantId}/members/${member.userId}`, payload: { role: 'viewer' } });
    expect(lowered.statusCode, lowered.body).toBe(200);
    receiver.release('/lookup');
    const answer = await turn;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json<Reply>().tool_calls).toMatchObject([
      { name: 'lookup', status: 'completed' },
      { name: 'payout', status: 'failed', error_code: 'forbidden', error: expect.stringContaining('member role') as unknown },
    ]);
    expect(receiver.received(payoutPath)).toHaveLength(0);
  });
});
