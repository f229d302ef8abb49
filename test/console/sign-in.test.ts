import { createClient } from '@agent-platform/client';
import { describe, expect, inject, it } from 'vitest';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();

describe('signing in (decisions §15)', () => {
  it('paints the sign-in page within a second of a first visit', async () => {
    await withConsole(async ({ page }) => {
      await page.goto('/console/');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const formShown = await page.evaluate(() => performance.now());
      // The entry is reported once the frame is presented: wait for it rather than read it at once.
      const paints = () => page.evaluate(() => performance.getEntriesByName('first-contentful-paint').map((entry) => entry.startTime));
      await expect.poll(paints).toHaveLength(1);
      const [firstContentfulPaint = Number.NaN] = await paints();
      console.log(`console: first contentful paint ${Math.round(firstContentfulPaint)} ms (target ≤ 1000 ms); sign-in form shown by ${Math.round(formShown)} ms`);
      expect(firstContentfulPaint).toBeLessThanOrEqual(1000);
      await checkPage(page, 'sign-in');
    });
  });

  it('registers a new user, who lands on an empty agents page and creates the first agent', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      await page.getByText('No agents yet').waitFor();
      await checkPage(page, 'agents-empty');
      await page.getByRole('button', { name: 'New agent' }).click();
      await page.getByLabel('Name').fill('Support bot');
      await page.getByLabel('Type').fill('support');
      await page.getByRole('button', { name: 'Create agent' }).click();
      await page.getByRole('heading', { name: 'Support bot', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Agents' }).click();
      await expect.poll(() => page.getByRole('link', { name: 'Support bot' }).count()).toBe(1);
      await checkPage(page, 'agents');
    });
  });

  it('shows each field the API refused next to it, once, in words written for people', async () => {
    await withConsole(async ({ page }) => {
      await page.goto('/console/register');
      await page.getByLabel('E-mail').fill('ada');
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      const messageOf = async (label: string) => {
        const control = page.getByLabel(label);
        await expect.poll(() => control.getAttribute('aria-invalid')).toBe('true');
        const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
        return page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent();
      };
      expect(await messageOf('Password')).toBe('must be at least 8 characters');
      expect(await messageOf('E-mail')).toBe('must be an e-mail address');
      const alert = (await page.getByRole('alert').textContent()) ?? '';
      expect(alert).toContain('Check the fields marked below.');
      expect(alert).toContain('validation_error');
      // Each message once: beside its control, not again in the notice.
      for (const message of ['must be at least 8 characters', 'must be an e-mail address']) expect(await page.getByText(message).count()).toBe(1);
      await checkPage(page, 'register-invalid');
    });
  });

  it('says why a sign-in failed with the API message', async () => {
    await withConsole(async ({ page }) => {
      await page.goto('/console/sign-in');
      await page.getByLabel('E-mail').fill(`nobody-${Date.now()}@example.com`);
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('unauthorized');
    });
  });

  it('stays signed in across a reload with only a refresh token kept, and forgets it at sign-out', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      const kept = await page.evaluate(() => ({ ...localStorage }));
      // Only the refresh token and the chosen tenant: never an access token or an API key.
      expect(Object.keys(kept).sort()).toEqual(['agent-platform.console.refresh-token', 'agent-platform.console.tenant']);
      await page.reload();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate(() => localStorage.getItem('agent-platform.console.refresh-token'))).toBeNull();
      await page.goto('/console/agents');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).searchParams.get('next')).toBe('/agents');
    });
  });

  it('signs in from a deep link and keeps the console in the address: a reload, going back and a copied link all open the page', async () => {
    await withConsole(async ({ page, context }) => {
      const account = { email: `deep-link-${Date.now()}@example.com`, password: 'correct horse battery staple' };
      await createClient({ baseUrl: inject('baseUrl') }).POST('/api/v1/auth/register', { body: account });
      const { data: agent } = await (await clientFor(account)).POST('/api/v1/agents', { body: { name: 'Deep link bot', type: 'assistant' } });
      const agentPath = `/console/agents/${agent!.id}`;
      const agentHeading = () => page.getByRole('heading', { name: 'Deep link bot', level: 1 }).waitFor();

      await page.goto(agentPath);
      await page.getByLabel('E-mail').fill(account.email);
      await page.getByLabel('Password').fill(account.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await agentHeading();
      expect(new URL(page.url()).pathname).toBe(agentPath);

      await page.reload();
      await agentHeading();
      await page.getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await page.goBack();
      await agentHeading();
      expect(new URL(page.url()).pathname).toBe(agentPath);

      const copied = await context.newPage();
      await copied.goto(page.url());
      await copied.getByRole('heading', { name: 'Deep link bot', level: 1 }).waitFor();
    });
  });

  it('is usable by keyboard alone: a skip link, then the navigation and forms by Tab and Enter', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      await page.reload();
      await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.locator(':focus').textContent()).toBe('Skip to content');
      // Tab onwards until the navigation's Workflows link has the focus, then follow it.
      for (let presses = 0; presses < 20; presses += 1) {
        if ((await page.locator(':focus').textContent()) === 'Workflows') break;
        await page.keyboard.press('Tab');
      }
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
      // Back to agents, and a new agent made with the keyboard only.
      await page.getByRole('link', { name: 'Agents' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'New agent' }).focus();
      await page.keyboard.press('Enter');
      await page.keyboard.type('Keyboard agent');
      await page.getByRole('button', { name: 'Create agent' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Keyboard agent', level: 1 }).waitFor();
    });
  });

  it('switches between the tenants the user belongs to, each showing its own agents', async () => {
    await withConsole(async ({ page }) => {
      const { email } = await registerThroughConsole(page, 'First Company');
      // A second account invites this user into its tenant, which has an agent of its own.
      const owner = { email: `owner-${Date.now()}@example.com`, password: 'correct horse battery staple' };
      const { data: registered } = await createClient({ baseUrl: inject('baseUrl') }).POST('/api/v1/auth/register', { body: { ...owner, company: 'Second Company' } });
      const ownerClient = await clientFor(owner);
      await ownerClient.POST('/api/v1/agents', { body: { name: 'Second company agent', type: 'assistant' } });
      const { response } = await ownerClient.POST('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: registered!.tenant_id } }, body: { email, role: 'member' } });
      expect(response.status).toBe(201);

      await page.reload();
      const switcher = page.getByLabel('Tenant');
      await expect.poll(() => switcher.locator('option').allTextContents()).toEqual(['First Company (owner)', 'Second Company (member)']);
      await switcher.selectOption({ label: 'Second Company (member)' });
      await page.getByRole('link', { name: 'Second company agent' }).waitFor();
      await switcher.selectOption({ label: 'First Company (owner)' });
      await page.getByText('No agents yet').waitFor();
    });
  });
});
