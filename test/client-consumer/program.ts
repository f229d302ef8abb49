/**
 * A program written against @agent-platform/client as a user outside this repository would write
 * it: it walks the platform's main paths with the typed client, prints `ok <n> - <step>` for each
 * step that passed and throws on anything unexpected.
 *
 *   node program.ts <base URL>        (or AGENT_PLATFORM_URL=<base URL> node program.ts)
 *
 * It receives its own webhook deliveries on a loopback port, so the platform must allow private
 * addresses (ALLOW_PRIVATE_NETWORK_URLS=true).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiResponseError,
  createClient,
  streamChat,
  verifyWebhook,
  WebhookVerificationError,
  type Agent,
  type AgentPlatformClient,
  type ApiError,
  type ChatMessage,
  type Execution,
  type WebhookEvent,
  type WebhookEventType,
} from '@agent-platform/client';

const baseUrl: string = process.argv[2] ?? process.env.AGENT_PLATFORM_URL ?? usage();

function usage(): never {
  throw new Error('usage: node program.ts <base URL of the platform>, or AGENT_PLATFORM_URL');
}

let passed = 0;
function step(name: string): void {
  passed += 1;
  console.log(`ok ${passed} - ${name}`);
}

function check(condition: boolean, message: string, detail?: unknown): asserts condition {
  if (!condition) throw new Error(detail === undefined ? message : `${message}: ${JSON.stringify(detail)}`);
}

/** The data of a call that had to answer `status`; otherwise an error naming the call and what came back. */
function ok<Data>(what: string, status: number, result: { data?: Data; error?: ApiError; response: Response }): Data {
  const { data, error, response } = result;
  if (response.status !== status || data === undefined) {
    throw new Error(`${what}: expected ${status}, got ${response.status}${error ? ` ${error.error}: ${error.message}` : ''}`);
  }
  return data;
}

function throws(run: () => unknown, type: new (...args: never[]) => Error): boolean {
  try {
    run();
    return false;
  } catch (error) {
    return error instanceof type;
  }
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(50);
  }
}

/** A webhook receiver that verifies each delivery before it answers, as a real one would. */
interface Delivery {
  event: WebhookEvent;
  body: Buffer;
  headers: IncomingHttpHeaders;
}
const deliveries: Delivery[] = [];
const refused: string[] = [];
let signingSecret = '';
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      deliveries.push({ event: verifyWebhook(body, request.headers, signingSecret), body, headers: request.headers });
      response.writeHead(204).end();
    } catch (error) {
      refused.push(String(error));
      response.writeHead(401).end();
    }
  });
});

async function main(): Promise<void> {
  const { client, tenantId } = await account();
  await apiKeys(client);
  step('API keys: created, listed by prefix, used; a key cannot manage keys; revoked');

  const webhook = await subscribe(client);
  step('webhooks: a bad URL is a typed 422 naming url; subscribed with a signing secret');

  const agents = await createAgents(client);
  step('agents: created and listed page by page');

  await verifyDeliveries(client, webhook.id, agents, tenantId);
  step('verifyWebhook: every agent.created delivery verified, a tampered copy refused');

  const [agent] = agents;
  check(agent !== undefined, 'an agent');
  await memory(client, agent);
  step('memory: added and searched');

  await chat(client, agent);
  step('chat and streamChat in one session');

  const routed = await workflow(client, agent);
  step('a workflow with a condition executed synchronously, each branch once');

  await executions(client, routed.id, routed.executions);
  step('its executions listed, a page at a time');

  await notFound(client);
  step('a typed 404, from a call and from streamChat');
}

/** Registers (twice: the second is a conflict), logs in and reads the user back; a client with the access token. */
async function account(): Promise<{ client: AgentPlatformClient; tenantId: string }> {
  const anonymous = createClient({ baseUrl });
  const email = `consumer-${randomUUID()}@example.com`;
  const password = 'correct horse battery staple';

  const registered = ok('register', 201, await anonymous.POST('/api/v1/auth/register', { body: { email, password, full_name: 'Outside User', company: 'Outside Co' } }));
  check(registered.email === email && registered.tenant_id.startsWith('tnt_') && registered.credits > 0, 'the registration', registered);
  step('register');

  const duplicate = await anonymous.POST('/api/v1/auth/register', { body: { email, password } });
  if (duplicate.error === undefined) throw new Error('a second registration of the same e-mail succeeded');
  check(duplicate.response.status === 409 && duplicate.error.error === 'conflict', 'a duplicate registration', duplicate.error);
  step('a duplicate registration is a typed 409 conflict');

  const tokens = ok('login', 200, await anonymous.POST('/api/v1/auth/login', { body: { username: email, password } }));
  check(tokens.token_type === 'bearer' && tokens.expires_in > 0 && tokens.refresh_token.length > 0, 'the tokens', tokens);
  const client = createClient({ baseUrl, accessToken: tokens.access_token });
  step('login');

  const me = ok('me', 200, await client.GET('/api/v1/auth/me'));
  const membership = me.tenants[0];
  check(me.id === registered.id && me.email === email && me.is_active && membership?.id === registered.tenant_id && membership.role === 'owner', 'me', me);
  step('me');
  return { client, tenantId: registered.tenant_id };
}

async function apiKeys(client: AgentPlatformClient): Promise<void> {
  const created = ok('create an API key', 201, await client.POST('/api/v1/auth/api-keys', { body: { name: 'consumer', scopes: ['agents:read', 'agents:write'] } }));
  check(created.key.startsWith('ap_live_') && created.key_prefix === created.key.slice(0, 12), 'the new key', created);
  const keys = ok('list API keys', 200, await client.GET('/api/v1/auth/api-keys'));
  const listed = keys.items.find((key) => key.id === created.id);
  check(listed !== undefined && listed.key_prefix === created.key_prefix && !('key' in listed), 'the key as listed', keys);

  const byKey = createClient({ baseUrl, apiKey: created.key });
  ok('list agents with the key', 200, await byKey.GET('/api/v1/agents'));
  const minted = await byKey.POST('/api/v1/auth/api-keys', { body: { name: 'minted by a key', scopes: ['*'] } });
  check(minted.response.status === 403 && minted.error?.error === 'forbidden', 'a key creating a key', minted.error ?? minted.data);
  const listedByKey = await byKey.GET('/api/v1/auth/api-keys');
  check(listedByKey.response.status === 403 && listedByKey.error?.error === 'forbidden', 'a key listing keys', listedByKey.error ?? listedByKey.data);

  const revoked = ok('revoke the key', 200, await client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id: created.id } } }));
  check(revoked.success, 'the revocation', revoked);
  const afterRevocation = await byKey.GET('/api/v1/agents');
  check(afterRevocation.response.status === 401 && afterRevocation.error?.error === 'unauthorized', 'a revoked key', afterRevocation.error ?? afterRevocation.data);
}

/** Refuses a bad URL, then subscribes the receiver (started here) to agent.created. */
async function subscribe(client: AgentPlatformClient): Promise<{ id: string }> {
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const { port } = receiver.address() as AddressInfo;
  const events: WebhookEventType[] = ['agent.created'];
  const badUrl = await client.POST('/api/v1/webhooks', { body: { url: 'not a url', events } });
  if (badUrl.error === undefined) throw new Error('a webhook with a bad URL was created');
  const fields = badUrl.error.details?.map((detail) => detail.field) ?? [];
  check(badUrl.response.status === 422 && badUrl.error.error === 'validation_error' && fields.includes('url'), 'a bad webhook URL', badUrl.error);

  const webhook = ok('create a webhook', 201, await client.POST('/api/v1/webhooks', { body: { url: `http://127.0.0.1:${port}/deliveries`, events, metadata: { by: 'consumer' } } }));
  check(webhook.signing_secret.startsWith('whsec_') && webhook.status === 'active' && webhook.events.includes('agent.created'), 'the webhook', webhook);
  signingSecret = webhook.signing_secret;
  return webhook;
}

async function createAgents(client: AgentPlatformClient): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (const name of ['Consumer one', 'Consumer two', 'Consumer three']) {
    agents.push(ok(`create agent ${name}`, 201, await client.POST('/api/v1/agents', { body: { name, type: 'assistant', config: { temperature: 0.2 } } })));
  }
  const firstPage = ok('list agents, page 1', 200, await client.GET('/api/v1/agents', { params: { query: { page: 1, per_page: 2 } } }));
  const secondPage = ok('list agents, page 2', 200, await client.GET('/api/v1/agents', { params: { query: { page: 2, per_page: 2 } } }));
  const listed = [...firstPage.agents, ...secondPage.agents].map((agent) => agent.id);
  check(firstPage.total === 3 && firstPage.per_page === 2 && firstPage.agents.length === 2 && secondPage.page === 2 && secondPage.agents.length === 1, 'the pages', { firstPage, secondPage });
  check(sameSet(listed, agents.map((agent) => agent.id)), 'the agents listed', listed);
  return agents;
}

/** The receiver verified an agent.created per agent; a tampered copy and another secret are refused; the log agrees. */
async function verifyDeliveries(client: AgentPlatformClient, webhookId: string, agents: readonly Agent[], tenantId: string): Promise<void> {
  await waitFor('an agent.created delivery per agent', () => deliveries.length + refused.length >= agents.length);
  check(refused.length === 0, 'deliveries the receiver could not verify', refused);
  const announced: string[] = [];
  for (const { event } of deliveries) {
    switch (event.type) {
      case 'agent.created':
        check(event.tenant_id === tenantId && event.id.startsWith('evt_'), 'the event', event);
        announced.push(event.data.id);
        break;
      default:
        throw new Error(`an event this webhook did not subscribe to: ${event.type}`);
    }
  }
  check(sameSet(announced, agents.map((agent) => agent.id)), 'the agents announced', announced);

  const [first] = deliveries;
  check(first !== undefined, 'a delivery');
  const tampered = Buffer.from(first.body.toString('utf8').replace(/"name":"[^"]*"/, '"name":"Impostor"'));
  check(!tampered.equals(first.body), 'the tampered copy differs');
  check(throws(() => verifyWebhook(tampered, first.headers, signingSecret), WebhookVerificationError), 'a tampered delivery was accepted');
  const anotherSecret = `whsec_${Buffer.from('another secret!!').toString('base64')}`;
  check(throws(() => verifyWebhook(first.body, first.headers, anotherSecret), WebhookVerificationError), 'another secret was accepted');

  await waitFor('the delivery log to show every delivery delivered', async () => {
    const log = ok('list deliveries', 200, await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: webhookId } } }));
    return log.total === agents.length && log.items.every((delivery) => delivery.status === 'delivered' && delivery.response_status === 204);
  });
}

async function memory(client: AgentPlatformClient, agent: Agent): Promise<void> {
  const cat = ok('add a memory', 201, await client.POST('/api/v1/memory', { body: { agent_id: agent.id, memory_type: 'semantic', content: 'The office cat is called Biscuit and sleeps on the printer.', metadata: { topic: 'office' } } }));
  const invoices = ok('add a memory', 201, await client.POST('/api/v1/memory', { body: { agent_id: agent.id, memory_type: 'semantic', content: 'Invoices are paid on the last Friday of the month.', metadata: { topic: 'finance' } } }));
  check(cat.id.startsWith('mem_') && cat.agent_id === agent.id && cat.metadata.topic === 'office', 'the memory item', cat);

  const found = ok('search memory', 200, await client.POST('/api/v1/memory/search', { body: { agent_id: agent.id, query: 'What is the office cat called?', top_k: 2 } }));
  const scores = found.results.map((result) => result.score);
  check(found.results[0]?.id === cat.id && scores.every((score, i) => score >= 0 && score <= 1 && (i === 0 || score <= scores[i - 1]!)), 'the search results', found);
  const filtered = ok('search memory by metadata', 200, await client.POST('/api/v1/memory/search', { body: { agent_id: agent.id, query: 'cat', filter: { topic: 'finance' } } }));
  check(filtered.results.length === 1 && filtered.results[0]?.id === invoices.id, 'the filtered search', filtered);
}

async function chat(client: AgentPlatformClient, agent: Agent): Promise<void> {
  const reply = ok('chat', 200, await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message: 'What is the office cat called?' } }));
  check(reply.role === 'assistant' && reply.session_id.startsWith('ses_') && reply.content.length > 0 && reply.usage.total_tokens > 0, 'the reply', reply);

  let streamed = '';
  let completed: ChatMessage | undefined;
  for await (const event of streamChat(client, agent.id, { message: 'And where does it sleep?', session_id: reply.session_id })) {
    switch (event.event) {
      case 'message.delta':
        streamed += event.data.content;
        break;
      case 'message.completed':
        completed = event.data;
        break;
      case 'error':
        throw new Error(`the stream failed: ${event.data.error}: ${event.data.message}`);
    }
  }
  check(completed !== undefined && completed.session_id === reply.session_id && streamed.length > 0 && completed.content === streamed, 'the streamed turn', { streamed, completed });

  const history = ok('read the session', 200, await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agent.id, session_id: reply.session_id } } }));
  const turns = history.items.map((message) => `${message.role}:${message.content}`);
  const expected = ['user:What is the office cat called?', `assistant:${reply.content}`, 'user:And where does it sleep?', `assistant:${completed.content}`];
  check(JSON.stringify(turns) === JSON.stringify(expected), 'the session', turns);
}

/** Creates a workflow that routes on a condition, runs each branch once; its id and its executions' ids, newest first. */
async function workflow(client: AgentPlatformClient, agent: Agent): Promise<{ id: string; executions: string[] }> {
  const created = ok('create a workflow', 201, await client.POST('/api/v1/workflows', {
    body: {
      name: 'Route orders',
      description: 'big orders are reviewed, the others shipped',
      nodes: [
        { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'review' }, { else: 'ship' }] } },
        { id: 'review', type: 'agent', config: { agent_id: agent.id, message: 'Review order {{ input.id }}' } },
        { id: 'ship', type: 'agent', config: { agent_id: agent.id, message: 'Ship order {{ input.id }}' } },
      ],
      edges: [
        { source: 'check', target: 'review' },
        { source: 'check', target: 'ship' },
      ],
    },
  }));
  check(created.id.startsWith('wf_') && created.status === 'draft' && created.trigger_type === 'manual', 'the workflow', created);

  const run = async (input: { id: string; amount: number }): Promise<Execution> => {
    const result = ok('execute synchronously', 200, await client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: created.id } }, body: { input, async: false } }));
    // One type for the 200 (the execution) and the 202 (accepted) bodies: narrow on a field of the former.
    if (!('node_executions' in result)) throw new Error(`async: false answered without the execution: ${JSON.stringify(result)}`);
    return result;
  };
  const statuses = (execution: Execution) => Object.fromEntries(execution.node_executions.map((node) => [node.node_id, node.status]));

  const big = await run({ id: 'A-1', amount: 250 });
  check(big.status === 'completed' && big.trigger === 'manual' && big.error === null, 'the big order run', big);
  check(JSON.stringify(statuses(big)) === JSON.stringify({ check: 'completed', review: 'completed', ship: 'skipped' }), 'the big order branch', statuses(big));
  const reviewed = big.node_executions.find((node) => node.node_id === 'review')?.output;
  check(typeof reviewed === 'object' && reviewed !== null && 'session_id' in reviewed && typeof reviewed.session_id === 'string', 'the agent node output', reviewed);

  const small = await run({ id: 'B-2', amount: 20 });
  check(small.status === 'completed', 'the small order run', small);
  check(JSON.stringify(statuses(small)) === JSON.stringify({ check: 'completed', review: 'skipped', ship: 'completed' }), 'the small order branch', statuses(small));
  return { id: created.id, executions: [small.id, big.id] };
}

async function executions(client: AgentPlatformClient, workflowId: string, newestFirst: readonly string[]): Promise<void> {
  const path = { workflow_id: workflowId };
  const listed: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; ; page += 1) {
    check(page <= newestFirst.length + 1, 'the executions list did not end', listed);
    const query = cursor === undefined ? { limit: 1 } : { limit: 1, cursor };
    const { items, total, next_cursor } = ok(`list executions, page ${page}`, 200, await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query } }));
    check(total === newestFirst.length && items.length <= 1 && items.every((execution) => execution.trigger === 'manual'), `page ${page} of the executions`, items);
    listed.push(...items.map((execution) => execution.id));
    if (next_cursor === null) break;
    cursor = next_cursor;
  }
  check(JSON.stringify(listed) === JSON.stringify(newestFirst), 'the executions, newest first', listed);
  const completed = ok('list completed executions', 200, await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query: { status: 'completed' } } }));
  check(sameSet(completed.items.map((execution) => execution.id), newestFirst), 'the completed executions', completed);
}

async function notFound(client: AgentPlatformClient): Promise<void> {
  const unknown = 'agt_01HZZZZZZZZZZZZZZZZZZZZZZZ';
  const missing = await client.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: unknown } } });
  if (missing.error === undefined) throw new Error('an agent that does not exist was found');
  check(missing.response.status === 404 && missing.error.error === 'not_found', 'an unknown agent', missing.error);
  try {
    for await (const _event of streamChat(client, unknown, { message: 'Anyone there?' })) throw new Error('an unknown agent streamed');
    throw new Error('streaming to an unknown agent ended without an error');
  } catch (error) {
    if (!(error instanceof ApiResponseError) || error.status !== 404 || error.apiError?.error !== 'not_found') throw error;
  }
}

function sameSet(actual: readonly string[], expected: readonly string[]): boolean {
  return actual.length === expected.length && new Set(actual).size === actual.length && expected.every((id) => actual.includes(id));
}

try {
  await main();
  console.log(`passed all ${passed} steps`);
} catch (error) {
  console.error(`not ok ${passed + 1} - ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  receiver.closeAllConnections();
  receiver.close();
}
