// The whole journey through the console, in one browser session of one new user: every
// page working with the others against the real platform (decisions §15). Each area's own tests
// cover its edges; this one covers the way between them.
import { verifyWebhook } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();
let receiver: Receiver;
beforeAll(async () => {
  // The agent's refund tool and the webhook endpoint, both answered here.
  receiver = await startReceiver((request) => (request.path.startsWith('/hooks') ? { status: 204 } : { json: { refunded: request.json ?? null } }));
});
afterAll(async () => {
  await receiver.close();
});

const ORDER_SCHEMA = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

/**
 * In the page (the tests' types have no DOM, hence the cast): the reply's first words are shown
 * while Send is still disabled, at one moment.
 */
function replyStreamingWhileSendDisabled(): boolean {
  const { document } = globalThis as unknown as { document: { body: { innerText: string }; querySelectorAll: (selector: string) => Iterable<{ textContent: string | null; disabled: boolean }> } };
  const send = [...document.querySelectorAll('button')].find((button) => button.textContent === 'Send');
  return document.body.innerText.includes('I am the built-in offline model') && send?.disabled === true;
}

async function openFromNavigation(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
}

describe('the console end to end', () => {
  it('takes a new user from registration through agents, tools, chat, memory, workflows, approvals and webhooks', { timeout: 180_000 }, async () => {
    await withConsole(async ({ page, context }) => {
      await registerThroughConsole(page, 'Journey Company');

      // A tool that needs a person's approval, made on the Tools page.
      await openFromNavigation(page, 'Tools');
      await page.getByRole('button', { name: 'New tool' }).click();
      await page.getByLabel('Name', { exact: true }).fill('refund_order');
      await page.getByLabel('Description').fill('Refunds an order.');
      await page.getByLabel('URL', { exact: true }).fill(receiver.url('/refund'));
      await page.getByLabel('Input schema (JSON)').fill(JSON.stringify(ORDER_SCHEMA));
      await page.getByRole('checkbox', { name: 'Requires approval' }).check();
      await page.getByRole('button', { name: 'Create tool' }).click();
      await page.getByRole('row').filter({ hasText: 'refund_order' }).waitFor();

      // An agent that may call it.
      await openFromNavigation(page, 'Agents');
      await page.getByRole('button', { name: 'New agent' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Concierge');
      await page.getByLabel('Type', { exact: true }).fill('support');
      await page.getByRole('button', { name: 'Create agent' }).click();
      await page.getByRole('heading', { name: 'Concierge', level: 1 }).waitFor();
      await page.getByRole('checkbox', { name: 'refund_order' }).check();
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

      // A chat: the reply streams in (on a slowed network its first words show while Send is still
      // disabled), and what the turn taught the agent is found once extraction has run.
      await page.getByRole('link', { name: 'Playground' }).click();
      await page.getByRole('heading', { name: 'New session' }).waitFor();
      await page.getByLabel('End user (optional)').fill('dana');
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 1500, uploadThroughput: -1 });
      const message = page.getByLabel('Message', { exact: true });
      await message.fill('I moved to Lisbon.');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.waitForFunction(replyStreamingWhileSendDisabled, undefined, { timeout: 20_000, polling: 'raf' });
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      const conversation = page.getByRole('list', { name: 'Conversation' });
      await conversation.getByText('Facts learned (1)').waitFor({ timeout: 20_000 });
      expect(await conversation.textContent()).toContain('I moved to Lisbon.');

      // A turn that calls the gated tool stops until a person approves the call.
      await message.fill('Please refund_order {"order_id": "A-7"}');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      expect(receiver.received('/refund')).toEqual([]);
      await page.getByRole('button', { name: 'Approve' }).click();
      const calls = page.getByRole('list', { name: 'Tool calls' });
      await expect.poll(() => calls.first().textContent(), { timeout: 15_000 }).toContain('completed');
      expect(await calls.first().textContent()).toContain('refund_order');
      expect(receiver.received('/refund')).toHaveLength(1);
      await checkPage(page, 'journey-playground');

      // The fact in the agent's memory, and its history.
      await openFromNavigation(page, 'Memory');
      await page.getByRole('link', { name: 'I moved to Lisbon.' }).click();
      const history = page.getByRole('table', { name: 'Every change, oldest first' }).locator('tbody tr');
      await expect.poll(() => history.allTextContents()).toEqual([expect.stringMatching(/^ADD.*I moved to Lisbon\..*Extracted from a chat turn/)]);

      // An endpoint subscribed to finished executions, before the workflow runs.
      await openFromNavigation(page, 'Webhooks');
      await page.getByRole('button', { name: 'New webhook' }).click();
      await page.getByLabel('Endpoint URL').fill(receiver.url('/hooks/journey'));
      await page.getByRole('group', { name: 'Events' }).getByRole('checkbox', { name: 'workflow.execution.completed' }).check();
      await page.getByRole('button', { name: 'Create webhook' }).click();
      const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
      await page.getByRole('button', { name: 'I have copied it' }).click();

      // A workflow with an approval node, from the editor's example, run with an input.
      await openFromNavigation(page, 'Workflows');
      await page.getByRole('button', { name: 'New workflow' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Refunds');
      expect(await page.getByLabel('Graph (JSON: nodes and edges)').inputValue()).toContain('"type": "approval"');
      await page.getByRole('button', { name: 'Create workflow' }).click();
      await page.getByRole('heading', { name: 'Refunds', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.getByRole('button', { name: 'Pause' }).waitFor();
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByLabel('Input (JSON)').fill('{ "amount": 250 }');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('heading', { name: 'Execution of Refunds', level: 1 }).waitFor();

      // Approved from the execution page, which follows the run to its end by itself.
      const approval = page.getByRole('group', { name: 'Approval of approve' });
      await approval.getByText('Refund 250 EUR?', { exact: false }).waitFor();
      await approval.getByRole('button', { name: 'Approve', exact: true }).click();
      await expect.poll(() => page.getByTestId('execution-status').textContent(), { timeout: 20_000 }).toBe('completed');
      await checkPage(page, 'journey-execution');

      // Its completion reached the endpoint, signed, and the endpoint's log shows the delivery.
      const [delivered] = await receiver.waitFor(1, { match: (request) => request.path === '/hooks/journey' });
      expect(verifyWebhook(delivered!.body, delivered!.headers, secret).type).toBe('workflow.execution.completed');
      await openFromNavigation(page, 'Webhooks');
      await page.getByRole('link', { name: receiver.url('/hooks/journey') }).click();
      const delivery = page.getByRole('row').filter({ hasText: 'workflow.execution.completed' });
      await delivery.getByText('delivered').waitFor();
      expect(await delivery.textContent()).toContain('204');
      await checkPage(page, 'journey-webhook');
    });
  });
});
