import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { anonymousCall, callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { iso, TenantQuery } from '../../../../http/schemas.js';
import login from './login.js';
import { CurrentUser, RefreshBody, RegisterBody, RegisteredUser, TokenResponse, tokenBody } from './schemas.js';

/** /auth: registration, tokens and the current user. API keys live in ./api-keys. */
const authRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/register',
    {
      schema: {
        operationId: 'registerUser',
        tags: ['auth'],
        summary: 'Register a user, with a new tenant they own and the welcome credits',
        body: RegisterBody,
        response: { 201: RegisteredUser, ...errorResponses({ conflict: 'The e-mail address is already registered.' }) },
      },
    },
    async (request, reply) => {
      const { email, password, full_name, company } = request.body;
      const user = await app.identity.auth.register(
        { email: email.toLowerCase(), password, fullName: full_name, company },
        anonymousCall(request),
      );
      return reply.code(201).send({
        id: user.id,
        email: user.email,
        full_name: user.fullName,
        tenant_id: user.tenantId,
        credits: user.credits,
        created_at: iso(user.createdAt),
      });
    },
  );

  await app.register(login);

  app.post(
    '/refresh',
    {
      schema: {
        operationId: 'refreshToken',
        tags: ['auth'],
        summary: 'Exchange a refresh token for a new token pair (the old one is spent)',
        body: RefreshBody,
        response: {
          200: TokenResponse,
          ...errorResponses({
            unauthorized: 'The refresh token is unknown, expired or spent; presenting a spent one revokes its whole family.',
          }),
        },
      },
    },
    async (request) => {
      const { tokens } = await app.identity.auth.refresh({ refreshToken: request.body.refresh_token }, anonymousCall(request));
      return tokenBody(tokens);
    },
  );

  app.get(
    '/me',
    {
      schema: {
        operationId: 'getCurrentUser',
        tags: ['auth'],
        summary: 'Get the current user (for an API key: its creator) with every tenant membership',
        querystring: TenantQuery,
        response: { 200: CurrentUser },
      },
    },
    async (request) => {
      const user = await app.identity.users.getCurrentUser({}, callAs(request));
      return {
        id: user.id,
        email: user.email,
        full_name: user.fullName,
        is_active: user.isActive,
        created_at: iso(user.createdAt),
        tenants: user.tenants.map((tenant) => ({ id: tenant.id, name: tenant.name, role: tenant.role })),
      };
    },
  );
};

export default authRoutes;
