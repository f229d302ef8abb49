import fp from 'fastify-plugin';
import { AccessTokenVerifier } from '../../auth/access-tokens.js';
import { PrincipalResolver } from '../../auth/principal-resolver.js';

/**
 * Access-token verification (identity's JWK set, checked locally) and principal resolution
 * (memberships and API keys, cached briefly). The routes' autohooks call them.
 */
export default fp(
  (app, options: { now: () => number }, done) => {
    const { config, identity } = app;
    const accessTokens = new AccessTokenVerifier({
      fetchKeys: async () => (await identity.auth.getJwks({})).keys,
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      minRefreshIntervalMs: config.JWKS_REFRESH_MIN_INTERVAL_MS,
      now: options.now,
    });
    app.decorate('accessTokens', accessTokens);
    app.decorate(
      'principals',
      new PrincipalResolver({
        auth: identity.auth,
        verifier: accessTokens,
        cache: app.authCache,
        ttlSeconds: config.AUTH_CACHE_TTL_SECONDS,
        logger: app.log.child({ component: 'principals' }),
        now: options.now,
      }),
    );
    app.decorateRequest('principal', null);
    done();
  },
  { name: 'authentication', dependencies: ['config', 'identity', 'stores'] },
);
