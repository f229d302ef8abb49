import { createLogger } from '@agent-platform/kit';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, loadGatewayConfig, type Gateway } from '../src/gateway.js';
import { TEST_REDIS_URL as REDIS_URL, uniquePrefix } from './support/redis.js';

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-abc123.js"></script>';
const SCRIPT = 'console.log("console")';

async function gatewayServing(consoleDir: string): Promise<Gateway> {
  const config = loadGatewayConfig({ REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix(), CONSOLE_DIR: consoleDir, LOG_LEVEL: 'silent' });
  return buildGateway(config, { logger: createLogger({ service: 'gateway-test', level: 'silent' }) });
}

let dir: string;
let built: Gateway;
let unbuilt: Gateway;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'console-dist-'));
  await mkdir(join(dir, 'built', 'assets'), { recursive: true });
  await writeFile(join(dir, 'built', 'index.html'), INDEX);
  await writeFile(join(dir, 'built', 'assets', 'index-abc123.js'), SCRIPT);
  await mkdir(join(dir, 'empty'));
  built = await gatewayServing(join(dir, 'built'));
  unbuilt = await gatewayServing(join(dir, 'empty'));
});
afterAll(async () => {
  await built.stop();
  await unbuilt.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the console at /console (decisions §15)', () => {
  it('sends /console to /console/, where the page is', async () => {
    const redirect = await built.app.inject({ method: 'GET', url: '/console' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/console/');
    const page = await built.app.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toBe(INDEX);
  });

  it("sends a visitor of the platform's own address (/) to the console", async () => {
    const response = await built.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/console/');
  });

  it('answers the page for every path the console routes in the browser, revalidated at each visit', async () => {
    for (const url of ['/console/agents', '/console/workflows/wf_123/executions/ex_9?status=failed', '/console/sign-in']) {
      const response = await built.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toBe(INDEX);
      expect(response.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('serves built files, cached for good since their names change with their content', async () => {
    const response = await built.app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.body).toBe(SCRIPT);
  });

  it('answers a missing file with the API error format, never the page in its place', async () => {
    const response = await built.app.inject({ method: 'GET', url: '/console/assets/index-old999.js' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: 'not_found' });
  });

  it('sends a content security policy that allows only its own origin, and is never framed', async () => {
    for (const url of ['/console/', '/console/agents', '/console/assets/index-abc123.js']) {
      const response = await built.app.inject({ method: 'GET', url });
      const policy = String(response.headers['content-security-policy']);
      expect(policy, url).toContain("default-src 'self'");
      expect(policy, url).toContain("script-src 'self'");
      expect(policy, url).toContain("frame-ancestors 'none'");
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('says how to build the console until it is built, then serves the build without a restart', async () => {
    const response = await unbuilt.app.inject({ method: 'GET', url: '/console/agents' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ error: 'service_unavailable', message: expect.stringContaining('pnpm build') });

    await mkdir(join(dir, 'empty', 'assets'));
    await writeFile(join(dir, 'empty', 'index.html'), INDEX);
    await writeFile(join(dir, 'empty', 'assets', 'index-abc123.js'), SCRIPT);
    expect((await unbuilt.app.inject({ method: 'GET', url: '/console/agents' })).body).toBe(INDEX);
    expect((await unbuilt.app.inject({ method: 'GET', url: '/console/assets/index-abc123.js' })).body).toBe(SCRIPT);
  });

  it('serves a file a rebuild wrote while it runs (a watching build, Tilt)', async () => {
    await writeFile(join(dir, 'built', 'assets', 'page-new456.js'), 'console.log("rebuilt")');
    const response = await built.app.inject({ method: 'GET', url: '/console/assets/page-new456.js' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('console.log("rebuilt")');
  });

  it('leaves the API alone', async () => {
    const response = await built.app.inject({ method: 'GET', url: '/api/v1/agents' });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: 'unauthorized' });
  });
});
