import { createLogger } from '@agent-platform/kit';
import Fastify, { type FastifyInstance, type HTTPMethods, type RouteOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICIES, type PolicyKey } from '../auth/policy.js';
import { loadGatewayConfig } from '../config.js';
import { buildGateway, type Gateway } from '../gateway.js';
import { InertTransport } from '../openapi/inert-transport.js';
import api, { checkAgainstPolicyTable } from './api.js';
import { apiHooks } from './api/v1/autohooks.js';

const ROWS = Object.keys(POLICIES) as PolicyKey[];
const MOUNTS = [
  { prefix: '/api/v1', documented: true },
  { prefix: '/v1', documented: false },
] as const;

function split(key: string): { method: HTTPMethods; path: string } {
  const [method = '', path = ''] = key.split(' ');
  return { method, path };
}

/** Fastify with the gateway's compilers: the hooks add zod response schemas (the Error body). */
function zodFastify(): FastifyInstance {
  const app = Fastify({ exposeHeadRoutes: false });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  return app;
}

/** A stand-in route for a `METHOD /path` key. */
function route(key: string): RouteOptions {
  const { method, path } = split(key);
  return { method, url: path, handler: () => key };
}

describe('the route tree under /api/v1 and /v1', () => {
  interface Seen {
    method: string | string[];
    url: string;
    config?: { policy?: unknown };
    schema?: { hide?: boolean };
  }
  const seen: Seen[] = [];
  let app: FastifyInstance;

  beforeAll(async () => {
    // The two mounts as app.ts makes them, without the rest of the gateway.
    app = zodFastify();
    app.decorate('config', loadGatewayConfig({}));
    app.addHook('onRoute', (added) => {
      seen.push(added);
    });
    for (const mount of MOUNTS) await app.register(api, mount);
    await app.ready();
  });
  afterAll(() => app.close());

  it.each(MOUNTS)('registers exactly the rows of the policy table under $prefix, each with its row', ({ prefix, documented }) => {
    const routes = seen.filter((route) => route.url.startsWith(`${prefix}/`));
    const keys = routes.map((route) => `${String(route.method)} ${route.url.slice(prefix.length)}`);
    expect(keys.toSorted()).toEqual(ROWS.toSorted());
    for (const [index, route] of routes.entries()) {
      expect(route.config?.policy, keys[index]).toBe(POLICIES[keys[index] as PolicyKey]);
      // GET and DELETE /mcp only refuse (405): no operations, hidden under either prefix.
      const refusal = keys[index] === 'GET /mcp' || keys[index] === 'DELETE /mcp';
      expect(route.schema?.hide, keys[index]).toBe(documented && !refusal ? undefined : true);
    }
  });

  it('turns a `_name` folder into the `:name` path parameter', () => {
    expect(seen.map((route) => route.url)).toContain('/api/v1/agents/:agent_id/chat');
    expect(seen.filter((route) => route.url.includes('/_'))).toEqual([]);
  });
});

describe('the gateway over inert backends', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    const inert = new InertTransport();
    gateway = await buildGateway(loadGatewayConfig({ LOG_LEVEL: 'silent' }), {
      logger: createLogger({ service: 'gateway-routes-test', level: 'silent' }),
      backends: { identity: inert, agentMemory: inert, webhookDispatcher: inert, workflowRunner: inert },
    });
  });
  afterAll(() => gateway.app.close());

  it.each(ROWS)('answers %s under both prefixes', (key) => {
    const { method, path } = split(key);
    for (const { prefix } of MOUNTS) expect(gateway.app.hasRoute({ method, url: `${prefix}${path}` }), `${prefix} ${key}`).toBe(true);
  });

  it('refuses a request without a credential on every guarded row, under both prefixes', async () => {
    for (const key of ROWS.filter((row) => POLICIES[row].auth !== 'none')) {
      const { method, path } = split(key);
      for (const { prefix } of MOUNTS) {
        const url = `${prefix}${path.replaceAll(/:(\w+)/g, 'x')}`;
        const response = await gateway.app.inject({ method, url });
        expect(response.statusCode, `${method} ${url}`).toBe(401);
      }
    }
  });
});

describe('the start', () => {
  /** A mount with a route for each of `keys`, given the API's hooks (unless `unhooked`). */
  async function mount(keys: readonly string[], unhooked: readonly string[] = []): Promise<FastifyInstance> {
    const app = zodFastify();
    await app.register(
      async (scope) => {
        checkAgainstPolicyTable(scope);
        await scope.register((hooked, _options, done) => {
          apiHooks(hooked, { prefix: '/api/v1', documented: true });
          for (const key of keys) hooked.route(route(key));
          done();
        });
        await scope.register((bare, _options, done) => {
          for (const key of unhooked) bare.route(route(key));
          done();
        });
      },
      { prefix: '/api/v1' },
    );
    return app;
  }

  it('succeeds when every row has its route', async () => {
    const app = await mount(ROWS);
    await expect(app.ready()).resolves.toBeDefined();
    await app.close();
  });

  it('fails on a policy row without a route, naming it', async () => {
    const app = await mount(ROWS.filter((key) => key !== 'DELETE /memory/:memory_id'));
    await expect(app.ready()).rejects.toThrow(
      'The routes under /api/v1 and the policy table disagree: no route for DELETE /memory/:memory_id: add it under src/routes/api/v1 or remove its row from src/auth/policy.ts',
    );
    await app.close();
  });

  it('fails on a route without a policy row, naming it', async () => {
    const app = await mount([...ROWS, 'GET /auth/unlisted']);
    await expect(app.ready()).rejects.toThrow(
      'The routes under /api/v1 and the policy table disagree: no policy for GET /auth/unlisted: add its row to src/auth/policy.ts',
    );
    await app.close();
  });

  it('fails on a route the autohooks did not reach', async () => {
    const app = await mount(
      ROWS.filter((key) => key !== 'GET /auth/me'),
      ['GET /auth/me'],
    );
    await expect(app.ready()).rejects.toThrow('The routes under /api/v1 and the policy table disagree: not guarded by src/routes/api/v1/autohooks.ts: GET /auth/me');
    await app.close();
  });
});
