/**
 * The console in Debian's chromium against the all-in-one platform (`pnpm start`): the JavaScript
 * a first visit downloads (from the build's own report), first contentful paint of a cold visit,
 * and the executions page of a workflow with BENCH_CONSOLE_EXECUTIONS executions (default 10,000):
 * time to its first page of rows, to each next page, rows in the page, and the page's JS heap
 * after paging. Targets (decisions §15): first load ≤ 250 kB gzipped, first paint ≤ 1 s, the
 * executions page paged (never all loaded) and as quick with 10,000 as with 20.
 * Run: pnpm bench   (prints figures, asserts nothing)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Page } from 'playwright-core';
import { freePort, REPO_ROOT } from '../e2e/harness/processes.js';
import { launchChromium } from '../console/harness/chromium.js';
import { percentile } from './counting-receiver.js';
import { recordFigure } from './figures.js';
import { QUICK } from './load.js';
import { dataOf, signIn, startPlatform } from './platform.js';

const EXECUTIONS = Number(process.env.BENCH_CONSOLE_EXECUTIONS ?? (QUICK ? 2_000 : 10_000));
const SAMPLES = QUICK ? 3 : 7;
const PAGES = QUICK ? 3 : 10;

interface BuildReport {
  firstLoad: { gzipBytes: number; bytes: number };
  totalJs: { gzipBytes: number };
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

/** Milliseconds from now until `rows` rows of executions are on the page. */
async function untilRows(page: Page, started: number, expectedFirst?: string): Promise<number> {
  const rows = page.getByRole('row').filter({ has: page.getByRole('link', { name: /^exe_/ }) });
  await rows.nth(19).waitFor();
  if (expectedFirst !== undefined) await rows.first().filter({ hasNotText: expectedFirst }).waitFor();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-'));
  // `pnpm start`, which builds the console first when a source changed.
  const platform = await startPlatform({ dataDir, port: await freePort(), env: { RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0' } });
  // Launched inside the try: a missing browser must not leave the platform running.
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    browser = await launchChromium();
    const report = JSON.parse(await readFile(join(REPO_ROOT, 'console/dist/build-report.json'), 'utf8')) as BuildReport;

    const email = `bench-console-${Date.now()}@example.com`;
    const { client, accessToken } = await signIn(platform.baseUrl, email);
    const workflow = dataOf(
      await client.POST('/api/v1/workflows', { body: { name: 'Quick', nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }], edges: [] } }),
      'creating the workflow',
    );
    const path = { workflow_id: workflow.id };
    const started = await autocannon({
      url: `${platform.baseUrl}/api/v1/workflows/${workflow.id}/execute`,
      method: 'POST',
      connections: 50,
      amount: EXECUTIONS,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: '{"input":{}}',
    });
    if (started['2xx'] !== EXECUTIONS) throw new Error(`executing: ${started['2xx']} of ${EXECUTIONS} accepted`);
    const count = async (status: 'running' | 'completed') =>
      dataOf(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query: { status, limit: 1 } } }), 'counting executions').total;
    while ((await count('running')) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    const completed = await count('completed');

    // A cold first visit, each in a fresh profile (nothing cached).
    const paints: number[] = [];
    // The app shell paints first; this is when the page itself (the sign-in form) is up.
    const formsShown: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const context = await browser.newContext({ baseURL: platform.baseUrl });
      const page = await context.newPage();
      await page.goto('/console/sign-in');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      formsShown.push(await page.evaluate(() => performance.now()));
      const paint = async () => page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime);
      let value = await paint();
      while (value === undefined) value = await paint();
      paints.push(value);
      await context.close();
    }

    const context = await browser.newContext({ baseURL: platform.baseUrl, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const listed: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes(`/api/v1/workflows/${workflow.id}/executions?`)) listed.push(request.url());
    });
    await page.goto('/console/sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('bench password 123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();

    const firstPage: number[] = [];
    for (let sample = 0; sample < SAMPLES; sample++) {
      const begun = performance.now();
      await page.goto(`/console/workflows/${workflow.id}/executions`);
      firstPage.push(await untilRows(page, begun));
    }
    const rowsShown = await page.getByRole('row').filter({ has: page.getByRole('link', { name: /^exe_/ }) }).count();
    const nextPage: number[] = [];
    for (let turn = 0; turn < PAGES; turn++) {
      const first = (await page.getByRole('link', { name: /^exe_/ }).first().textContent()) ?? '';
      const begun = performance.now();
      await page.getByRole('button', { name: 'Next' }).click();
      nextPage.push(await untilRows(page, begun, first));
    }
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const heapMiB = (metrics.find((metric) => metric.name === 'JSHeapUsedSize')?.value ?? 0) / 1024 / 1024;
    const largestLimit = Math.max(...listed.map((url) => Number(new URL(url).searchParams.get('limit') ?? 0)));

    const kB = (bytes: number) => bytes / 1024;
    console.log('console (Debian chromium, headless, against pnpm start):');
    console.log(`  first load ${kB(report.firstLoad.gzipBytes).toFixed(1)} kB of JavaScript gzipped (target ≤ 250 kB; ${kB(report.firstLoad.bytes).toFixed(0)} kB raw); every chunk ${kB(report.totalJs.gzipBytes).toFixed(1)} kB gzipped`);
    recordFigure('console first-load JavaScript (gzipped)', { value: kB(report.firstLoad.gzipBytes), unit: 'kB', better: 'lower' });
    console.log(`  first contentful paint of a cold visit: median ${Math.round(median(paints))} ms of ${SAMPLES} (target ≤ 1000 ms), max ${Math.round(Math.max(...paints))} ms`);
    recordFigure('console first contentful paint', { value: median(paints), unit: 'ms', better: 'lower' });
    console.log(`  the sign-in form shown: median ${Math.round(median(formsShown))} ms after navigation began (the script loaded, parsed and run)`);
    recordFigure('console sign-in form shown', { value: median(formsShown), unit: 'ms', better: 'lower' });
    console.log(`  executions page with ${completed} executions: first page of ${rowsShown} rows in median ${Math.round(median(firstPage))} ms, each next page ${Math.round(median(nextPage))} ms (max ${Math.round(Math.max(...nextPage))} ms over ${PAGES})`);
    console.log(`  every list request asked for at most ${largestLimit} executions (${listed.length} requests); page JS heap after paging ${heapMiB.toFixed(1)} MiB`);
    recordFigure(`console executions page, next page with ${EXECUTIONS} executions`, { value: median(nextPage), unit: 'ms', better: 'lower' });
    await context.close();
  } finally {
    await browser?.close();
    await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
