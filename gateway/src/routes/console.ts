import { DomainError, errorBody } from '@agent-platform/kit';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sendError } from '../http/errors.js';

/** Where the console's build is when CONSOLE_DIR does not say: the console package's dist/. */
export function defaultConsoleDir(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@agent-platform/console/package.json')), 'dist');
  } catch {
    return undefined;
  }
}

// The console calls only this origin's API; nothing inline, nothing from elsewhere, never framed.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const CONSOLE_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

// Sent as is: the error handler masks every 5xx message, and this one is the fix.
const NOT_BUILT = errorBody(new DomainError('service_unavailable', 'The console is not built: run `pnpm build` (`pnpm start` builds it too).'));

/**
 * The web console (decisions §15) at /console: its files as built, and index.html for every other
 * path under it (the console routes in the browser). Built files are named by their content, so
 * they are cached for good; index.html is revalidated at every visit, so a new build is seen at once.
 * Files are looked up at each request, not listed at start: a build made while the gateway runs
 * (Tilt's watch, `pnpm build`) is served as it is, and a gateway started before the first build
 * serves the console once it exists.
 */
const consoleRoutes: FastifyPluginAsync<{ root: string | undefined; bodyLimit: number }> = async (app, { root, bodyLimit }) => {
  app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/', 301));
  // A visitor who opens the platform's address meets the console, not a JSON 404. Found, not moved
  // for good: the root is the platform's to give another page one day.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/', 302));
  await app.register(
    async (scope) => {
      if (root === undefined) {
        scope.get('/*', { schema: { hide: true } }, (_request, reply) => reply.code(503).send(NOT_BUILT));
        return;
      }
      await scope.register(fastifyStatic, {
        root,
        prefix: '/',
        index: false,
        setHeaders: (reply, path) => {
          reply.headers(CONSOLE_HEADERS).header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
      const sendPage = (reply: FastifyReply) =>
        existsSync(join(root, 'index.html')) ? reply.headers(CONSOLE_HEADERS).header('cache-control', 'no-cache').sendFile('index.html') : reply.code(503).send(NOT_BUILT);
      // Only /console/: /console itself redirects here.
      scope.get('/', { schema: { hide: true }, prefixTrailingSlash: 'slash' }, (_request, reply) => sendPage(reply));
      // What no built file answers: a page the console routes in the browser, or a file that is not there.
      scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
        // A file that is not there (an old build's chunk) is a 404, never the page in its place.
        if (request.url.startsWith('/console/assets/')) return sendError(new DomainError('not_found', 'No such file.'), request, reply, bodyLimit);
        return sendPage(reply);
      });
    },
    { prefix: '/console' },
  );
};

export default consoleRoutes;
