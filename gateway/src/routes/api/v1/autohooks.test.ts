import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { apiHooks } from './autohooks.js';

describe('apiHooks', () => {
  it('refuses to start with a route missing from the policy table', async () => {
    const app = Fastify();
    void app.register(
      (api, _options, done) => {
        apiHooks(api, { documented: true });
        api.get('/auth/unlisted', () => 'never');
        done();
      },
      { prefix: '/api/v1' },
    );
    await expect(app.ready()).rejects.toThrow('No policy for GET /auth/unlisted');
    await app.close();
  });

  it('attaches the row and the OpenAPI security, hiding the copies under an alias', async () => {
    const app = Fastify({ exposeHeadRoutes: false });
    const seen: { url: string; config?: unknown; schema?: unknown }[] = [];
    app.addHook('onRoute', (route) => {
      seen.push(route);
    });
    for (const [prefix, documented] of [['/api/v1', true], ['/v1', false]] as const) {
      await app.register(
        (api, _options, done) => {
          apiHooks(api, { documented });
          api.get('/auth/me', () => 'me');
          api.post('/auth/login', () => 'login');
          done();
        },
        { prefix },
      );
    }
    await app.ready();
    expect(seen.map(({ url, config, schema }) => ({ url, config, schema: JSON.parse(JSON.stringify(schema)) as unknown }))).toEqual([
      { url: '/api/v1/auth/me', config: { policy: { auth: 'user-or-key', minRole: 'viewer' } }, schema: { security: [{ bearerAuth: [] }] } },
      { url: '/api/v1/auth/login', config: { policy: { auth: 'none' } }, schema: { security: [] } },
      { url: '/v1/auth/me', config: { policy: { auth: 'user-or-key', minRole: 'viewer' } }, schema: { security: [{ bearerAuth: [] }], hide: true } },
      { url: '/v1/auth/login', config: { policy: { auth: 'none' } }, schema: { security: [], hide: true } },
    ]);
    await app.close();
  });

  it('gives a HEAD twin the row of its GET', async () => {
    const app = Fastify({ exposeHeadRoutes: true });
    const heads: { config?: unknown }[] = [];
    app.addHook('onRoute', (route) => {
      if (route.method === 'HEAD') heads.push(route);
    });
    await app.register(
      (api, _options, done) => {
        apiHooks(api, { documented: true });
        api.get('/billing/credits', () => 'credits');
        done();
      },
      { prefix: '/api/v1' },
    );
    await app.ready();
    expect(heads.map((route) => route.config)).toEqual([{ policy: { auth: 'user-or-key', minRole: 'viewer', scope: 'billing:read' } }]);
    await app.close();
  });
});
