import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import autohooks, { API_HOOK_OPTIONS, apiHooks, type ApiHookOptions } from './autohooks.js';

/** Fastify with the gateway's compilers: the hooks add zod response schemas (the Error body). */
function zodFastify(options: { exposeHeadRoutes: boolean }) {
  const app = Fastify(options);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  return app;
}

describe('apiHooks', () => {
  it('leaves a route missing from the policy table without a row, closed to every request', async () => {
    const app = Fastify();
    await app.register(
      (api, _options, done) => {
        apiHooks(api, { prefix: '/api/v1', documented: true });
        api.get('/auth/unlisted', () => 'never');
        done();
      },
      { prefix: '/api/v1' },
    );
    const response = await app.inject({ method: 'GET', url: '/api/v1/auth/unlisted' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('never');
    await app.close();
  });

  it('takes its options from the mount, as autoload registers it without any', async () => {
    const app = zodFastify({ exposeHeadRoutes: false });
    const seen: { url: string; config?: unknown; schema?: { hide?: boolean } }[] = [];
    app.addHook('onRoute', (route) => {
      seen.push(route);
    });
    await app.register(
      (mount, _options, done) => {
        mount.decorate(API_HOOK_OPTIONS, { prefix: mount.prefix, documented: false } satisfies ApiHookOptions);
        // A folder's scope below the mount, with the folder's prefix, as autoload makes it.
        void mount.register(
          (folder, _folderOptions, folderDone) => {
            autohooks(folder, {}, () => {});
            folder.get('/credits', () => 'credits');
            folderDone();
          },
          { prefix: '/billing' },
        );
        done();
      },
      { prefix: '/v1' },
    );
    await app.ready();
    expect(seen.map(({ url, config, schema }) => ({ url, config, hide: schema?.hide }))).toEqual([
      { url: '/v1/billing/credits', config: { policy: { auth: 'user-or-key', minRole: 'viewer', scope: 'billing:read' } }, hide: true },
    ]);
    await app.close();
  });

  it('attaches the row and the OpenAPI security, hiding the copies under an alias', async () => {
    const app = zodFastify({ exposeHeadRoutes: false });
    const seen: { url: string; config?: unknown; schema?: unknown }[] = [];
    app.addHook('onRoute', (route) => {
      seen.push(route);
    });
    for (const [prefix, documented] of [['/api/v1', true], ['/v1', false]] as const) {
      await app.register(
        (api, _options, done) => {
          apiHooks(api, { prefix, documented });
          api.get('/auth/me', () => 'me');
          api.post('/auth/login', () => 'login');
          done();
        },
        { prefix },
      );
    }
    await app.ready();
    const me = [{ bearerAuth: [] }, { apiKeyAuth: [] }];
    expect(
      seen.map(({ url, config, schema }) => {
        const { security, hide, response } = schema as { security: unknown; hide?: boolean; response: Record<string, unknown> };
        return { url, config, security, hide, statuses: Object.keys(response) };
      }),
    ).toEqual([
      { url: '/api/v1/auth/me', config: { policy: { auth: 'user-or-key', minRole: 'viewer' } }, security: me, hide: undefined, statuses: ['400', '401', '403', '429', '500', '503'] },
      { url: '/api/v1/auth/login', config: { policy: { auth: 'none' } }, security: [], hide: undefined, statuses: ['400', '413', '429', '500', '503'] },
      { url: '/v1/auth/me', config: { policy: { auth: 'user-or-key', minRole: 'viewer' } }, security: me, hide: true, statuses: ['400', '401', '403', '429', '500', '503'] },
      { url: '/v1/auth/login', config: { policy: { auth: 'none' } }, security: [], hide: true, statuses: ['400', '413', '429', '500', '503'] },
    ]);
    await app.close();
  });

  it('gives a HEAD twin the row of its GET', async () => {
    const app = zodFastify({ exposeHeadRoutes: true });
    const heads: { config?: unknown }[] = [];
    app.addHook('onRoute', (route) => {
      if (route.method === 'HEAD') heads.push(route);
    });
    await app.register(
      (api, _options, done) => {
        apiHooks(api, { prefix: '/api/v1', documented: true });
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
