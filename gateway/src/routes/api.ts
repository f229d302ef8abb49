import { fileURLToPath } from 'node:url';
import autoload from '@fastify/autoload';
import type { FastifyInstance, FastifyPluginAsync, RouteOptions } from 'fastify';
import { routeTableDrift } from '../auth/policy.js';
import { API_HOOK_OPTIONS, routeKeyPath, type ApiHookOptions } from './api/v1/autohooks.js';

/** The route tree (src/ under tsx and Vitest, dist/ when compiled: the same tree either way). */
const ROUTES_DIR = fileURLToPath(new URL('./api/v1', import.meta.url));

/**
 * A folder's index.ts (index.js once compiled) is its route plugin; schemas.ts, login.ts and other
 * helpers are imported by it, never registered. Tests never are, wherever they sit.
 */
const ROUTE_PLUGIN = /\/index\.(?:ts|js)$/;
const TEST_FILE = /\.test\./;

/** Each mount says whether it is documented; its prefix is the one it is registered with. */
export type ApiOptions = Pick<ApiHookOptions, 'documented'>;

/**
 * The versioned REST API, mounted twice by app.ts, under /api/v1 (documented) and /v1 (the exact
 * alias of decisions §1), so both prefixes run the very same handlers and hooks. The folder tree
 * under ./api/v1 is the route table (fastify/demo's layout, by @fastify/autoload): each folder's
 * index is registered with the folder's path as its prefix, `_agent_id/` becoming `:agent_id`
 * (`routeParams`), and ./api/v1/autohooks.ts runs in every folder's scope (`autoHooks` with
 * `cascadeHooks`: without the cascade, the routes of subfolders would get no hooks at all).
 */
const api: FastifyPluginAsync<ApiOptions> = async (app, { documented }) => {
  // autoload registers autohooks without options: the hooks read them from this scope.
  app.decorate(API_HOOK_OPTIONS, { prefix: app.prefix, documented } satisfies ApiHookOptions);
  checkAgainstPolicyTable(app);
  await app.register(autoload, {
    dir: ROUTES_DIR,
    routeParams: true,
    autoHooks: true,
    cascadeHooks: true,
    matchFilter: ROUTE_PLUGIN,
    ignoreFilter: TEST_FILE,
  });
};

export default api;

function methodsOf(route: RouteOptions): string[] {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  // A HEAD route is GET's twin (when Fastify exposes them) and shares its row.
  return methods.map((method) => (method === 'HEAD' ? 'GET' : method));
}

/**
 * The folder tree and the policy table (src/auth/policy.ts) must name the same routes: the start
 * fails, naming them, on a route without a row, a row without a route, or a route the autohooks
 * did not reach (which would be open to anyone). Checked per mount, after every route is added.
 */
export function checkAgainstPolicyTable(app: FastifyInstance): void {
  const prefix = app.prefix;
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  app.addHook('onReady', (done) => {
    const keyOf = (route: RouteOptions) => methodsOf(route).map((method) => `${method} ${routeKeyPath(route.url, prefix)}`);
    const { unlisted, unrouted } = routeTableDrift(routes.flatMap(keyOf));
    const unguarded = routes.filter((route) => !route.config?.policy && !keyOf(route).some((key) => unlisted.includes(key))).flatMap(keyOf);
    const problems = [
      ...(unlisted.length ? [`no policy for ${unlisted.join(', ')}: add its row to src/auth/policy.ts`] : []),
      ...(unrouted.length ? [`no route for ${unrouted.join(', ')}: add it under src/routes/api/v1 or remove its row from src/auth/policy.ts`] : []),
      ...(unguarded.length ? [`not guarded by src/routes/api/v1/autohooks.ts: ${unguarded.join(', ')}`] : []),
    ];
    done(problems.length === 0 ? undefined : new Error(`The routes under ${prefix} and the policy table disagree: ${problems.join('; ')}`));
  });
}
