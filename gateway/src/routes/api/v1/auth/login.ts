import formbody from '@fastify/formbody';
import { DomainError } from '@agent-platform/kit';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { anonymousCall } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { LoginBody, TokenResponse, tokenBody } from './schemas.js';

/**
 * POST /auth/login, in its own scope: only here are form bodies (the spec's login) accepted
 * beside JSON. Failed logins are counted per e-mail and refused past the limit before identity.
 */
const login: FastifyPluginAsyncZod = async (app) => {
  await app.register(formbody, { bodyLimit: app.config.BODY_LIMIT_BYTES });

  app.post(
    '/login',
    {
      schema: {
        operationId: 'login',
        tags: ['auth'],
        summary: 'Log in with e-mail and password; returns an access token and a refresh token',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: LoginBody,
        response: {
          200: TokenResponse,
          ...errorResponses({
            unauthorized: 'Wrong e-mail or password (one message for both).',
            rate_limit_exceeded: 'Too many attempts from this client IP, or too many failed logins for this e-mail.',
          }),
        },
      },
    },
    async (request) => {
      const email = request.body.username.toLowerCase();
      const refused = await app.rateLimiter.loginAllowed(email);
      if (refused) throw refused;
      try {
        const { tokens } = await app.identity.auth.login({ email, password: request.body.password }, anonymousCall(request));
        return tokenBody(tokens);
      } catch (error) {
        if (error instanceof DomainError && error.code === 'unauthorized') await app.rateLimiter.loginFailed(email);
        throw error;
      }
    },
  );
};

export default login;
