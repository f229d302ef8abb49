import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { PageQuery, pageOf, SuccessSchema, TenantQuery } from '../../../../../../http/schemas.js';
import { AgentParams } from '../../schemas.js';
import { sessionBody, sessionMessageBody, SessionMessageSchema, SessionParams, SessionSchema } from './schemas.js';

/** /agents/{agent_id}/sessions: an agent's conversations and their messages. */
const sessionRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['agents'];

  app.get(
    '',
    {
      schema: {
        operationId: 'listAgentSessions',
        tags,
        summary: 'List the chat sessions of an agent, newest first',
        params: AgentParams,
        querystring: PageQuery,
        response: { 200: pageOf(SessionSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.chat.listSessions({ agentId: request.params.agent_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(sessionBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/:session_id/messages',
    {
      schema: {
        operationId: 'listSessionMessages',
        tags,
        summary: 'List the messages of a session, oldest first',
        description: "Another agent's or another tenant's session is 404, as an absent one.",
        params: SessionParams,
        querystring: PageQuery,
        response: { 200: pageOf(SessionMessageSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const { agent_id, session_id } = request.params;
      const answer = await app.agentMemory.chat.listSessionMessages({ agentId: agent_id, sessionId: session_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(sessionMessageBody), total: answer.total, page, per_page };
    },
  );

  app.delete(
    '/:session_id',
    {
      schema: {
        operationId: 'deleteAgentSession',
        tags,
        summary: 'Forget a session and its messages',
        params: SessionParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      const { agent_id, session_id } = request.params;
      await app.agentMemory.chat.deleteSession({ agentId: agent_id, sessionId: session_id }, callAs(request));
      return { success: true as const, message: 'Session deleted, with its messages.' };
    },
  );
  done();
};

export default sessionRoutes;
