import AxeBuilder from '@axe-core/playwright';
import { mkdir } from 'node:fs/promises';
import { createClient, type AgentPlatformClient } from '@agent-platform/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { REPO_ROOT } from '../../e2e/harness/processes.js';
import { launchChromium } from './chromium.js';

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** Where each page's screenshots are kept (test artefacts, not committed). */
export const SCREENSHOT_DIR = `${REPO_ROOT}test/console/screenshots`;

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Errors the page logged or threw (CSP violations, failed renders); a test ends with none. */
  errors: string[];
}

/** A fresh browser profile on the console of the platform under test. */
async function openConsole(browser: Browser, viewport: ViewportName = 'desktop'): Promise<ConsolePage> {
  const context = await browser.newContext({ baseURL: inject('baseUrl'), viewport: VIEWPORTS[viewport], reducedMotion: 'reduce' });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A 4xx the page shows on purpose is logged by the browser as a failed resource load; those are expected.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`console: ${message.text()}`);
  });
  return { page, context, errors };
}

/**
 * One browser for the file's tests (launched before them, closed after), and the way each test
 * uses it: `withConsole(run)` runs in a fresh profile and fails the test on any error the page
 * logged; `openConsole()` is another profile (a second user), which its caller closes.
 */
export function useConsoleBrowser(): { withConsole: (run: (console: ConsolePage) => Promise<void>, viewport?: ViewportName) => Promise<void>; openConsole: (viewport?: ViewportName) => Promise<ConsolePage> } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  const open = (viewport?: ViewportName) => {
    if (!browser) throw new Error('useConsoleBrowser: the browser is launched in beforeAll, before any test');
    return openConsole(browser, viewport);
  };
  return {
    openConsole: open,
    withConsole: async (run, viewport) => {
      const opened = await open(viewport);
      try {
        await run(opened);
        expect(opened.errors).toEqual([]);
      } finally {
        await opened.context.close();
      }
    },
  };
}

/** The typed client of an account, signed in: for setup that is not the point of a test. */
export async function clientFor(account: { email: string; password: string }): Promise<AgentPlatformClient> {
  const baseUrl = inject('baseUrl');
  const { data: tokens } = await createClient({ baseUrl }).POST('/api/v1/auth/login', { body: { username: account.email, password: account.password } });
  if (!tokens) throw new Error(`clientFor: ${account.email} could not sign in`);
  return createClient({ baseUrl, accessToken: tokens.access_token });
}

/** No serious or critical accessibility violation on the page as it is now. */
export async function expectAccessible(page: Page): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  expect(serious.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`)).toEqual([]);
}

/**
 * Checks the page as it is now, then keeps a screenshot of it at desktop and phone width
 * (`screenshots/<name>-desktop.png`, `-phone.png`) and checks it again at phone width, where the
 * layout differs.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  await expectAccessible(page);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}-desktop.png`, fullPage: true });
  await page.setViewportSize(VIEWPORTS.phone);
  await expectAccessible(page);
  await expectTablesFit(page, name);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}-phone.png`, fullPage: true });
  if (original) await page.setViewportSize(original);
}

/** The message the page shows for a control: the last element its aria-describedby names, once the control is marked invalid. */
export async function messageFor(page: Page, label: string): Promise<string | null> {
  const control = page.getByLabel(label, { exact: true });
  await expect.poll(() => control.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
  const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
  return page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent();
}

let accounts = 0;

/**
 * Every table cell a person can see lies within the screen: on a phone no column is cut off its
 * side, to be found only by scrolling a table sideways (the agents table's last column was).
 */
export async function expectTablesFit(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? VIEWPORTS.phone.width;
  const cutOff: string[] = [];
  for (const cell of await page.locator('tbody td, tbody th').all()) {
    const box = await cell.boundingBox();
    if (!box || box.width === 0 || box.height === 0) continue;
    if (box.x < -0.5 || box.x + box.width > width + 0.5) cutOff.push(`${((await cell.textContent()) ?? '').trim().slice(0, 40)} (${Math.round(box.x)}–${Math.round(box.x + box.width)} px)`);
  }
  expect(cutOff, `${name}: table cells beyond a ${width} px screen`).toEqual([]);
}

/** Registers a new account through the console's own form and lands on its agents page. */
export async function registerThroughConsole(page: Page, company = 'Console Tests'): Promise<{ email: string; password: string }> {
  const email = `console-${process.pid}-${Date.now()}-${++accounts}@example.com`;
  const password = 'correct horse battery staple';
  await page.goto('/console/register');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Full name').fill('Ada Lovelace');
  await page.getByLabel('Company').fill(company);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  return { email, password };
}
