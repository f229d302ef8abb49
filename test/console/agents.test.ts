import type { AgentPlatformClient, RequestBody } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpServer, text } from '../../services/agent-memory/test/support/mcp-server.js';
import { checkPage, clientFor, messageFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();
/** What the agents' http tools call: it answers the order it was sent, shipped. */
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => ({ json: { order: request.json ?? null, state: 'shipped' } }));
});
afterAll(async () => {
  await receiver.close();
});

const ORDER_SCHEMA = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

async function createTool(api: AgentPlatformClient, body: Pick<RequestBody<'/api/v1/tools', 'post'>, 'name' | 'config'> & Partial<RequestBody<'/api/v1/tools', 'post'>>): Promise<string> {
  const { data, response } = await api.POST('/api/v1/tools', { body: { type: 'http', input_schema: ORDER_SCHEMA, ...body } });
  expect(response.status).toBe(201);
  return data!.id;
}

/**
 * In the page (the tests' own types have no DOM, hence the cast): the reply's beginning is shown, its
 * end not yet, and Send is disabled, all at one moment.
 */
function partialReplyWhileSending(): boolean {
  const { document } = globalThis as unknown as { document: { body: { innerText: string }; querySelectorAll: (selector: string) => Iterable<{ textContent: string | null; disabled: boolean }> } };
  const text = document.body.innerText;
  const send = [...document.querySelectorAll('button')].find((button) => button.textContent === 'Send');
  return text.includes('I am the built-in offline model') && !text.includes('Tool results (1)') && send?.disabled === true;
}

describe('agent settings', () => {
  it('creates an agent, shows the field the API refused, saves a change and deletes the agent', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      await page.getByRole('button', { name: 'New agent' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Order helper');
      await page.getByLabel('Type', { exact: true }).fill('support');
      await page.getByRole('button', { name: 'Create agent' }).click();
      await page.getByRole('heading', { name: 'Order helper', level: 1 }).waitFor();
      const settingsTab = page.getByRole('link', { name: 'Settings' });
      expect(await settingsTab.getAttribute('aria-current')).toBe('page');
      await page.getByRole('button', { name: 'Save changes' }).waitFor();
      await checkPage(page, 'agent-settings');

      await page.getByLabel('Temperature').fill('5');
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect(await messageFor(page, 'Temperature')).toMatch(/2/);
      // Shown beside its control only: the notice points there rather than repeating it.
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Check the fields marked below.');
      expect(await page.getByRole('alert').textContent()).not.toContain('config.temperature');
      await checkPage(page, 'agent-settings-invalid');

      await page.getByLabel('Temperature').fill('0.4');
      await page.getByLabel('Description').fill('Answers questions about orders.');
      await page.getByLabel('System prompt').fill('Be brief.');
      await page.getByLabel('Memory extraction').selectOption({ label: 'Off' });
      await page.getByRole('checkbox', { name: 'procedural' }).check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);

      // What was saved is what the API now holds.
      await page.reload();
      await expect.poll(() => page.getByLabel('Temperature').inputValue()).toBe('0.4');
      expect(await page.getByLabel('Description').inputValue()).toBe('Answers questions about orders.');
      expect(await page.getByLabel('Memory extraction').inputValue()).toBe('false');
      expect(await page.getByRole('checkbox', { name: 'procedural' }).isChecked()).toBe(true);

      await page.getByRole('button', { name: 'Delete agent' }).click();
      await checkPage(page, 'agent-delete-confirm');
      await page.getByRole('button', { name: 'Delete permanently' }).click();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await page.getByText('No agents yet').waitFor();
    });
  });
});

describe('agent versions', () => {
  it('lists the versions, shows how one differs from the current settings, and restores it once confirmed', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const lookup = await createTool(api, { name: 'lookup_order', config: { url: receiver.url('/lookup') } });
      const { data: agent } = await api.POST('/api/v1/agents', { body: { name: 'Versioned', type: 'support', config: { system_prompt: 'Be brief.', temperature: 0.2 } } });
      const path = { params: { path: { agent_id: agent!.id } } };
      const { data: changed } = await api.PATCH('/api/v1/agents/{agent_id}', { ...path, body: { config: { system_prompt: 'Be thorough.', temperature: 0.2 }, tools: [lookup] } });
      expect(changed!.version).toBe(2);

      await page.goto(`/console/agents/${agent!.id}`);
      await page.getByRole('link', { name: 'Versions', exact: true }).click();
      const versions = page.getByRole('region', { name: 'Version list' }).locator('tbody tr');
      await expect.poll(() => versions.allTextContents()).toEqual([expect.stringMatching(/^Version 2 current/), expect.stringMatching(/^Version 1/)]);
      await page.getByRole('link', { name: 'View version 1' }).click();
      await page.getByRole('heading', { name: 'Version 1', level: 3 }).waitFor();
      // Only what differs, setting by setting: the prompt, and the tool added since.
      const differences = page.getByRole('region', { name: 'Differences between version 1 and the current settings' }).locator('tbody tr');
      await expect.poll(() => differences.count()).toBe(2);
      expect(await differences.nth(0).getByRole('cell').allTextContents()).toEqual(['config.system_prompt', 'Be brief.', 'Be thorough.']);
      expect(await differences.nth(1).getByRole('cell').allTextContents()).toEqual(['tools', 'none', 'lookup_order']);
      await checkPage(page, 'agent-versions');

      await page.getByRole('button', { name: 'Restore version 1' }).click();
      const confirm = page.getByRole('group', { name: "Make version 1's settings the current ones, as version 3?" });
      await checkPage(page, 'agent-versions-restore-confirm');
      // Asked, not done: the agent is still at version 2.
      expect((await api.GET('/api/v1/agents/{agent_id}', path)).data!.version).toBe(2);
      await confirm.getByRole('button', { name: 'Restore version 1' }).click();
      await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 3.' }).waitFor();
      const { data: restored } = await api.GET('/api/v1/agents/{agent_id}', path);
      expect(restored).toMatchObject({ version: 3, config: { system_prompt: 'Be brief.', temperature: 0.2 }, tools: [] });

      // The restored version is the one shown, and stays so across a reload.
      await page.reload();
      await page.getByRole('heading', { name: 'Version 3', level: 3 }).waitFor();
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ tab: 'versions', version: '3' });
      await page.getByText('This is the current version.').waitFor();
      await expect.poll(() => versions.allTextContents()).toEqual([expect.stringMatching(/^Version 3 current/), expect.stringMatching(/^Version 2/), expect.stringMatching(/^Version 1/)]);
    });
  });
});

describe('tools', () => {
  it('are created and edited on the Tools page (errors on their fields) and attached to an agent in its settings', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const { data: agent } = await api.POST('/api/v1/agents', { body: { name: 'Refunds', type: 'support' } });

      await page.getByRole('link', { name: 'Tools' }).click();
      await page.getByRole('heading', { name: 'Tools', level: 1 }).waitFor();
      await page.getByText('No tools yet').waitFor();
      await checkPage(page, 'tools-empty');

      const toolCreations: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/v1/tools') toolCreations.push(request.url());
      });
      await page.getByRole('button', { name: 'New tool' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Refund Order');
      await page.getByLabel('Description').fill('Refunds an order. Needs a person to approve it.');
      await page.getByLabel('URL', { exact: true }).fill(receiver.url('/refund'));
      await page.getByLabel('Input schema (JSON)').fill('{"type": "object", "properties": ');
      await page.getByRole('checkbox', { name: 'Requires approval' }).check();
      await page.getByRole('button', { name: 'Create tool' }).click();
      // Shown before sending: nothing reached the API.
      expect(await messageFor(page, 'Input schema (JSON)')).toMatch(/JSON/);
      expect(toolCreations).toEqual([]);
      await checkPage(page, 'tools-form-invalid-json');

      await page.getByLabel('Input schema (JSON)').fill(JSON.stringify(ORDER_SCHEMA, null, 2));
      await page.getByRole('button', { name: 'Add header' }).click();
      await page.getByLabel('Header 1 name').fill('authorization');
      await page.getByLabel('Header 1 value').fill('Bearer sk-refunds');
      await page.getByRole('button', { name: 'Create tool' }).click();
      // The API refuses the name, and says so next to it.
      expect(await messageFor(page, 'Name')).toBeTruthy();
      expect(toolCreations).toHaveLength(1);
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('validation_error');
      await checkPage(page, 'tools-form-invalid-name');

      await page.getByLabel('Name', { exact: true }).fill('refund_order');
      await page.getByRole('button', { name: 'Create tool' }).click();
      const row = page.getByRole('row').filter({ hasText: 'refund_order' });
      await row.waitFor();
      expect(await row.textContent()).toContain('required');
      expect(await row.textContent()).toContain(`POST ${receiver.url('/refund')}`);
      await checkPage(page, 'tools');

      // Edited: the stored header value is kept as *** and the method changes.
      await page.getByRole('button', { name: 'Edit refund_order' }).click();
      await page.getByRole('heading', { name: 'Edit refund_order' }).waitFor();
      expect(await page.getByLabel('Header 1 value').inputValue()).toBe('***');
      await page.getByLabel('Method').selectOption('PUT');
      await checkPage(page, 'tools-edit');
      await page.getByRole('button', { name: 'Save tool' }).click();
      await expect.poll(() => row.textContent()).toContain(`PUT ${receiver.url('/refund')}`);
      const { data: tools } = await api.GET('/api/v1/tools', {});
      expect(tools!.items).toMatchObject([{ name: 'refund_order', requires_approval: true, config: { method: 'PUT', headers: { authorization: '***' } } }]);

      // Attached to the agent through its settings.
      await page.goto(`/console/agents/${agent!.id}`);
      await page.getByRole('heading', { name: 'Refunds', level: 1 }).waitFor();
      await page.getByRole('checkbox', { name: 'refund_order' }).check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const { data: saved } = await api.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agent!.id } } });
      expect(saved!.tools).toEqual([tools!.items[0]!.id]);
      await checkPage(page, 'agent-settings-with-tool');
    });
  });
});

describe('tools of other types', () => {
  it("an mcp tool shows its server's tools and refreshes them; a workflow tool names a workflow, an agent tool an agent; a tool is deleted", async () => {
    const server = await startMcpServer({ tools: { search_issues: { description: 'Finds issues by words.', run: () => text('found') } } });
    try {
      await withConsole(async ({ page }) => {
        const api = await clientFor(await registerThroughConsole(page));
        const { data: workflow } = await api.POST('/api/v1/workflows', {
          body: { name: 'Order lookup', nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: receiver.url('/lookup'), method: 'GET' } }], edges: [] },
        });
        const { data: helper } = await api.POST('/api/v1/agents', { body: { name: 'Billing helper', type: 'assistant' } });

        await page.getByRole('link', { name: 'Tools' }).click();
        await page.getByRole('button', { name: 'New tool' }).click();
        await page.getByLabel('Type', { exact: true }).selectOption('mcp');
        await page.getByLabel('Name', { exact: true }).fill('tracker');
        await page.getByLabel('Server URL').fill(server.url);
        await page.getByRole('button', { name: 'Create tool' }).click();
        const tracker = page.getByRole('row').filter({ hasText: 'tracker' });
        await tracker.getByRole('list', { name: 'Tools of tracker' }).waitFor();
        expect(await tracker.textContent()).toContain('search_issues');

        server.tools.set('close_issue', { description: 'Closes an issue.', run: () => text('closed') });
        await page.getByRole('button', { name: 'Refresh the tools of tracker' }).click();
        await tracker.getByRole('status').filter({ hasText: 'The server lists 2 tools.' }).waitFor();
        await expect.poll(() => tracker.textContent()).toContain('close_issue');

        // An allowed tool the server does not list: the API's refusal, by name.
        await page.getByRole('button', { name: 'Edit tracker' }).click();
        await page.getByLabel('Allowed tools').fill('search_issues\nno_such_tool');
        await page.getByRole('button', { name: 'Save tool' }).click();
        await expect.poll(() => page.getByRole('alert').first().textContent(), { timeout: 10_000 }).toContain('config.allowed_tools[1]');
        expect(await page.locator('form').getByText('no_such_tool:', { exact: false }).count()).toBe(1);
        await checkPage(page, 'tools-mcp-invalid');
        await page.getByRole('button', { name: 'Cancel' }).click();

        await page.getByRole('button', { name: 'New tool' }).click();
        await page.getByLabel('Type', { exact: true }).selectOption('workflow');
        await page.getByLabel('Name', { exact: true }).fill('run_lookup');
        await page.getByLabel('Workflow', { exact: true }).selectOption({ label: 'Order lookup' });
        await page.getByRole('button', { name: 'Create tool' }).click();
        const lookup = page.getByRole('row').filter({ hasText: 'run_lookup' });
        await expect.poll(() => lookup.textContent()).toContain(workflow!.id);

        await page.getByRole('button', { name: 'New tool' }).click();
        await page.getByLabel('Type', { exact: true }).selectOption('agent');
        await page.getByLabel('Name', { exact: true }).fill('ask_billing');
        await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Billing helper' });
        await page.getByRole('button', { name: 'Create tool' }).click();
        const asking = page.getByRole('row').filter({ hasText: 'ask_billing' });
        await expect.poll(() => asking.textContent()).toContain(helper!.id);
        await checkPage(page, 'tools-types');

        await page.getByRole('button', { name: 'Delete run_lookup' }).click();
        await page.getByRole('button', { name: 'Delete tool' }).click();
        await expect.poll(() => lookup.count()).toBe(0);
        const { data: left } = await api.GET('/api/v1/tools', {});
        expect(left!.items.map((tool) => tool.name).toSorted()).toEqual(['ask_billing', 'tracker']);
      });
    } finally {
      await server.close();
    }
  });
});

describe('the playground', () => {
  it('streams a turn, shows its tool call and result, stops at a gated call until approved, and keeps the session', async () => {
    await withConsole(async ({ page, context }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const track = await createTool(api, { name: 'track_order', description: 'Tracks an order.', config: { url: receiver.url('/track') } });
      const refund = await createTool(api, { name: 'refund_order', description: 'Refunds an order.', config: { url: receiver.url('/refund') }, requires_approval: true });
      const { data: agent } = await api.POST('/api/v1/agents', { body: { name: 'Support', type: 'support', tools: [track, refund], config: { memory_extraction: false } } });

      await page.goto(`/console/agents/${agent!.id}`);
      await page.getByRole('link', { name: 'Playground' }).click();
      await page.getByText('No sessions yet').waitFor();
      await page.getByRole('heading', { name: 'New session' }).waitFor();
      await checkPage(page, 'playground-empty');

      await page.getByLabel('End user (optional)').fill('customer-42');
      const message = page.getByLabel('Message', { exact: true });
      const send = page.getByRole('button', { name: 'Send' });
      // A slow network, so the reply visibly arrives piece by piece.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 1500, uploadThroughput: -1 });
      await message.fill('Where is it? track_order {"order_id": "A-1"}');
      await message.press('Enter');
      // At one moment: the reply's beginning is shown, its end not yet, and Send is disabled.
      await page.waitForFunction(partialReplyWhileSending, undefined, { timeout: 20_000, polling: 'raf' });
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await page.getByText('Tool results (1)', { exact: false }).waitFor();
      await expect.poll(() => send.isDisabled()).toBe(false);
      const calls = page.getByRole('list', { name: 'Tool calls' });
      await expect.poll(() => calls.first().textContent()).toContain('completed');
      const firstCall = (await calls.first().textContent()) ?? '';
      expect(firstCall).toContain('track_order');
      expect(firstCall).toContain('"state": "shipped"');
      expect(firstCall).toMatch(/\d+ ms/);
      expect(await page.getByText(/Tokens:?\s*\d+/).count()).toBeGreaterThan(0);
      expect(receiver.received('/track')).toHaveLength(1);
      // The session it started is the one in the URL and in the list.
      await expect.poll(() => new URL(page.url()).searchParams.get('session')).toMatch(/^ses_/);
      const sessions = page.getByRole('region', { name: 'Sessions' });
      await expect.poll(() => sessions.getByRole('listitem').count()).toBe(1);
      await expect.poll(() => sessions.textContent()).toContain('end user customer-42');
      await checkPage(page, 'playground-turn');

      await message.fill('refund_order {"order_id": "A-1"}');
      await send.click();
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      await page.getByRole('button', { name: 'Reject' }).waitFor();
      await page.getByText('awaiting approval').waitFor();
      expect(receiver.received('/refund')).toEqual([]);
      await checkPage(page, 'playground-approval');

      // A new message while a call awaits its decision: the API's refusal is shown, the text kept.
      await message.fill('Anything else?');
      await message.press('Enter');
      const refusal = page.getByRole('alert').filter({ hasText: 'The message was not sent' });
      await expect.poll(() => refusal.textContent(), { timeout: 10_000 }).toContain('conflict');
      expect(await message.inputValue()).toBe('Anything else?');
      await checkPage(page, 'playground-refused');
      await message.fill('');

      await page.getByLabel('Comment on refund_order (optional)').fill('Refund approved');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('Tool results (1)', { exact: false }).nth(1).waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      const approved = (await calls.nth(1).textContent()) ?? '';
      expect(approved).toContain('refund_order');
      expect(approved).toContain('completed');
      expect(approved).toContain('Refund approved');
      expect(receiver.received('/refund')).toHaveLength(1);
      await checkPage(page, 'playground-approved');

      // Rejected, with a comment: the call is not run and the turn goes on without it.
      await message.fill('refund_order {"order_id": "A-2"}');
      await send.click();
      await page.getByLabel('Comment on refund_order (optional)').fill('Not this one');
      await page.getByRole('button', { name: 'Reject' }).click();
      await expect.poll(() => calls.nth(2).textContent(), { timeout: 10_000 }).toContain('rejected');
      await page.getByText('Tool results (1)', { exact: false }).nth(2).waitFor();
      expect(await calls.nth(2).textContent()).toContain('Not this one');
      expect(receiver.received('/refund')).toHaveLength(1);

      // Reloaded, and the session picked again from the list: its history, calls and results.
      await page.reload();
      await page.getByRole('link', { name: 'Playground' }).click();
      await page.getByRole('heading', { name: 'New session' }).waitFor();
      await sessions.getByRole('button', { name: /messages/ }).click();
      await page.getByRole('heading', { name: 'Conversation' }).waitFor();
      const transcript = page.getByRole('list', { name: 'Conversation' });
      await transcript.waitFor();
      const history = (await transcript.textContent()) ?? '';
      expect(history).toContain('Where is it? track_order');
      expect(history).toContain('refund_order {"order_id": "A-1"}');
      expect(history).toContain('"state": "shipped"');
      expect(history).toContain('Refund approved');
      expect(history).toContain('Not this one');
      expect(await transcript.getByText('Tool results (1)', { exact: false }).count()).toBe(3);
      await checkPage(page, 'playground-history');
    });
  });
});

describe('the playground and memory', () => {
  it('shows the memories a turn used, the facts it taught the agent, its tokens and its credits', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      // Keeps semantic memory, so it extracts facts from each turn (decisions §14).
      const { data: agent } = await api.POST('/api/v1/agents', { body: { name: 'Concierge', type: 'assistant' } });
      const { response } = await api.POST('/api/v1/memory', { body: { agent_id: agent!.id, memory_type: 'semantic', content: 'The customer prefers to be contacted by carrier pigeon.' } });
      expect(response.status).toBe(201);

      await page.goto(`/console/agents/${agent!.id}?tab=playground`);
      await page.getByRole('heading', { name: 'New session' }).waitFor();
      await page.getByLabel('End user (optional)').fill('dana');
      await page.getByLabel('Message', { exact: true }).fill('How should we contact the customer? Pigeon? I moved to Lisbon.');
      await page.getByRole('button', { name: 'Send' }).click();

      // The session's only turn.
      const turn = page.getByRole('list', { name: 'Conversation' });
      await turn.getByText('Memories used (1)').waitFor();
      expect(await turn.textContent()).toContain('The customer prefers to be contacted by carrier pigeon.');
      // Extraction runs after the turn: the page looks for what it taught, and shows it.
      await turn.getByText('Facts learned (1)').waitFor({ timeout: 20_000 });
      const learned = (await turn.textContent()) ?? '';
      expect(learned).toContain('I moved to Lisbon.');
      expect(learned).toMatch(/Credits:?\s*\d+/);
      expect(learned).toMatch(/Tokens:?\s*\d+/);
      const { data: items } = await api.GET('/api/v1/memory', { params: { query: { agent_id: agent!.id, user_id: 'dana' } } });
      expect(items!.items.map((item) => item.content)).toEqual(['I moved to Lisbon.']);
      await checkPage(page, 'playground-memory');

      // The session read back shows what the live turn showed: the memories it used, what it taught, its credits, tokens and model.
      const facts = async (list: typeof turn) => {
        const text = (await list.textContent()) ?? '';
        return {
          memories: /Memories used \(\d+\)/.exec(text)?.[0],
          credits: /Credits:?\s*\d+/.exec(text)?.[0],
          tokens: /Tokens:?\s*\d+/.exec(text)?.[0],
          model: /Model:?\s*\w+/.exec(text)?.[0],
        };
      };
      const live = await facts(turn);
      expect(live).toEqual({ memories: 'Memories used (1)', credits: expect.any(String), tokens: expect.any(String), model: expect.stringContaining('offline') });
      await page.reload();
      const history = page.getByRole('list', { name: 'Conversation' });
      await history.getByText('Facts learned (1)').waitFor();
      expect(await history.textContent()).toContain('I moved to Lisbon.');
      expect(await history.textContent()).toContain('The customer prefers to be contacted by carrier pigeon.');
      expect(await facts(history)).toEqual(live);
    });
  });
});
