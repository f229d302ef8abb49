import { createClient } from '@agent-platform/client';
import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole, openConsole } = useConsoleBrowser();

const PASSWORD = 'correct horse battery staple';

/** A second account, made with the typed client: someone to add as a member. */
async function registerWithClient(fullName: string): Promise<{ email: string; password: string; userId: string }> {
  const email = `second-${process.pid}-${Date.now()}@example.com`;
  const { data } = await createClient({ baseUrl: inject('baseUrl') }).POST('/api/v1/auth/register', { body: { email, password: PASSWORD, full_name: fullName, company: 'Elsewhere' } });
  return { email, password: PASSWORD, userId: data!.id };
}

function row(page: Page, text: string | RegExp) {
  return page.getByRole('row').filter({ hasText: text });
}

async function open(page: Page, link: string): Promise<void> {
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: link, level: 1 }).waitFor();
}

describe('API keys', () => {
  it('creates a key shown once that works with the typed client until it is revoked', async () => {
    await withConsole(async ({ page, context }) => {
      await registerThroughConsole(page);
      await open(page, 'API keys');
      await page.getByText('No API keys yet').waitFor();
      await checkPage(page, 'api-keys-empty');

      // No scope chosen: the API's message on the scopes group.
      await page.getByRole('button', { name: 'New API key' }).click();
      await page.getByLabel('Name').fill('CI deployments');
      await page.getByRole('button', { name: 'Create API key' }).click();
      const scopes = page.getByRole('group', { name: 'Scopes' });
      await expect.poll(() => scopes.getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('validation_error');
      await checkPage(page, 'api-keys-form-errors');

      await scopes.getByRole('checkbox', { name: /^agents:read/ }).check();
      await page.getByLabel('Expires on').fill('2099-12-31');
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.getByRole('heading', { name: /API key “CI deployments” created/ }).waitFor();
      const key = await page.getByLabel('API key', { exact: true }).inputValue();
      expect(key).toMatch(/^ap_live_/);
      await page.getByText('it is not shown again').waitFor();
      await checkPage(page, 'api-keys-secret');

      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      // Read in the page (the tests' own types are Node's, without the browser's clipboard).
      const copied: unknown = await page.evaluate('navigator.clipboard.readText()');
      expect(copied).toBe(key);

      const withKey = createClient({ baseUrl: inject('baseUrl'), apiKey: key });
      expect((await withKey.GET('/api/v1/agents')).response.status).toBe(200);

      await page.getByRole('button', { name: 'I have copied it' }).click();
      const listed = row(page, 'CI deployments');
      await listed.waitFor();
      expect(await listed.textContent()).toContain(`${key.slice(0, 12)}…`);
      expect(await listed.textContent()).toContain('agents:read');
      await checkPage(page, 'api-keys-list');
      await page.reload();
      await row(page, 'CI deployments').waitFor();
      expect(await page.content()).not.toContain(key);

      await page.getByRole('button', { name: 'Revoke CI deployments' }).click();
      await page.getByRole('group', { name: /Revoke “CI deployments”/ }).getByRole('button', { name: 'Revoke key' }).click();
      await page.getByText('No API keys yet').waitFor();
      expect((await withKey.GET('/api/v1/agents')).response.status).toBe(401);
    });
  });
});

describe('members', () => {
  it('adds a member by e-mail, who is refused as member, made admin, leaves; added again and removed', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page, 'Member Tests');
      const second = await registerWithClient('Grace Hopper');
      await open(page, 'Members');
      await row(page, '(you)').getByText('owner').waitFor();
      await checkPage(page, 'members');

      // An address nobody registered: the API's answer, in the form.
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByLabel('E-mail').fill(`nobody-${Date.now()}@example.com`);
      await page.getByRole('button', { name: 'Add to tenant' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('not_found');
      await checkPage(page, 'members-form-errors');

      await page.getByLabel('E-mail').fill(second.email);
      await page.getByLabel('Role').selectOption('member');
      await page.getByRole('button', { name: 'Add to tenant' }).click();
      await page.getByText(`${second.email} was added as member.`).waitFor();
      const member = row(page, second.email);
      await member.waitFor();
      expect(await member.getByRole('combobox', { name: `Role of ${second.email}` }).inputValue()).toBe('member');

      // The member, signed in to the console in this tenant, may not manage members.
      const theirs = await openConsole();
      try {
        await theirs.page.goto('/console/sign-in');
        await theirs.page.getByLabel('E-mail').fill(second.email);
        await theirs.page.getByLabel('Password').fill(second.password);
        await theirs.page.getByRole('button', { name: 'Sign in' }).click();
        await theirs.page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
        await theirs.page.getByLabel('Tenant').selectOption({ label: 'Member Tests (member)' });
        await theirs.page.getByRole('link', { name: 'Members', exact: true }).click();
        await expect.poll(() => theirs.page.getByRole('alert').textContent()).toContain('forbidden');
        await checkPage(theirs.page, 'members-forbidden');

        // Made admin, they may; and leaving the tenant themselves moves their session out of it.
        await member.getByRole('combobox', { name: `Role of ${second.email}` }).selectOption('admin');
        await member.getByRole('button', { name: 'Change role' }).click();
        // Saved once the list, read again, has the new role (the button is then disabled again).
        await expect.poll(() => member.getByRole('button', { name: 'Change role' }).isDisabled()).toBe(true);
        const me = await (await clientFor(second)).GET('/api/v1/auth/me');
        expect(me.data?.tenants.map((tenant) => `${tenant.name} (${tenant.role})`).sort()).toEqual(['Elsewhere (owner)', 'Member Tests (admin)']);
        await theirs.page.reload();
        const own = theirs.page.getByRole('row').filter({ hasText: '(you)' });
        await own.getByRole('button', { name: `Remove ${second.email}` }).click();
        await theirs.page.getByRole('button', { name: 'Leave tenant' }).click();
        const switcher = theirs.page.getByLabel('Tenant');
        await expect.poll(() => switcher.locator('option').allTextContents()).toEqual(['Elsewhere (owner)']);
        await own.getByText('owner').waitFor();
        expect(theirs.errors).toEqual([]);
      } finally {
        await theirs.context.close();
      }
      await page.reload();
      await row(page, '(you)').waitFor();
      expect(await row(page, second.email).count()).toBe(0);

      // Added again as a viewer, then removed by the owner once confirmed.
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByLabel('E-mail').fill(second.email);
      await page.getByLabel('Role').selectOption('viewer');
      await page.getByRole('button', { name: 'Add to tenant' }).click();
      await page.getByText(`${second.email} was added as viewer.`).waitFor();
      await member.getByRole('button', { name: `Remove ${second.email}` }).click();
      await page.getByRole('group', { name: /Remove Grace Hopper/ }).getByRole('button', { name: 'Remove member' }).click();
      await member.waitFor({ state: 'detached' });
      const after = await (await clientFor(second)).GET('/api/v1/auth/me');
      expect(after.data?.tenants.map((tenant) => tenant.name)).toEqual(['Elsewhere']);
    });
  });
});

describe('credits', () => {
  it('shows balance, plan and rate limit, refuses a bad amount beside its field, and buys credits into the ledger', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      await open(page, 'Credits');
      const figure = (name: string) => page.locator('.figure').filter({ has: page.getByRole('term').filter({ hasText: name }) }).getByRole('definition');
      await expect.poll(() => figure('Balance').textContent()).toBe('1,000 credits');
      expect(await figure('Plan').textContent()).toBe('free');
      expect(await figure('Low-credit threshold').textContent()).toMatch(/^100/);
      // The free plan's 60 a minute, and what this minute has left, from the X-RateLimit-* headers.
      expect(await figure('Rate limit').textContent()).toMatch(/^60 a minute\d+ left this minute, resets at/);
      const welcome = row(page, 'welcome_grant');
      expect(await welcome.textContent()).toContain('+1,000');
      await checkPage(page, 'credits');

      const credits = page.getByLabel('Credits to buy');
      await credits.fill('0');
      await page.getByRole('button', { name: 'Buy credits' }).click();
      await expect.poll(() => credits.getAttribute('aria-invalid')).toBe('true');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('validation_error');
      await checkPage(page, 'credits-form-errors');

      await credits.fill('250');
      await page.getByRole('button', { name: 'Buy credits' }).click();
      await page.getByText('Bought 250 credits (completed). The balance is now 1,250 credits.').waitFor();
      await expect.poll(() => figure('Balance').textContent()).toBe('1,250 credits');
      const purchase = row(page, 'purchase');
      await purchase.waitFor();
      expect(await purchase.textContent()).toContain('+250');
      expect(await purchase.textContent()).toContain('1,250');
      expect(await credits.getAttribute('aria-invalid')).toBeNull();
      await checkPage(page, 'credits-after-purchase');
    });
  });
});
