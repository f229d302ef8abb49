import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { pageOf, SuccessSchema, TenantQuery } from '../../../../http/schemas.js';
import {
  AddMemoryBody,
  jsonText,
  memoryItemBody,
  MemoryItemSchema,
  MemoryListQuery,
  MemoryParams,
  SearchMemoryBody,
  SearchResponse,
  searchResultBody,
} from './schemas.js';

/**
 * /memory: the memory of the tenant's agents, kept by the agent-memory service. Anyone in the
 * tenant searches and lists it (keys: memory:read); members and above change it (keys: memory:write).
 * An agent_id of another tenant is 404, as an absent one.
 */
const memoryRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['memory'];

  app.post(
    '',
    {
      schema: {
        operationId: 'addMemory',
        tags,
        summary: "Add an item to an agent's memory",
        description: "memory_type must be one of the agent's memory_types (422 otherwise).",
        querystring: TenantQuery,
        body: AddMemoryBody,
        response: { 201: MemoryItemSchema, ...errorResponses({ not_found: 'No such agent.', upstream_error: 'The embedding provider failed or timed out.' }) },
      },
    },
    async (request, reply) => {
      const { agent_id, memory_type, content, metadata } = request.body;
      const answer = await app.agentMemory.memory.addMemory(
        { agentId: agent_id, memoryType: memory_type, content, metadataJson: jsonText(metadata) },
        callAs(request),
      );
      return reply.code(201).send(memoryItemBody(answer.item));
    },
  );

  app.get(
    '',
    {
      schema: {
        operationId: 'listMemory',
        tags,
        summary: "List an agent's memory items, newest first",
        querystring: MemoryListQuery,
        response: { 200: pageOf(MemoryItemSchema), ...errorResponses({ not_found: 'No such agent.' }) },
      },
    },
    async (request) => {
      const { agent_id, memory_type, page, per_page } = request.query;
      const answer = await app.agentMemory.memory.listMemory({ agentId: agent_id, memoryType: memory_type, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(memoryItemBody), total: answer.total, page, per_page };
    },
  );

  app.post(
    '/search',
    {
      schema: {
        operationId: 'searchMemory',
        tags,
        summary: "Search an agent's memory, best match first",
        description: 'Hybrid ranking: meaning (vectors) and exact words (full text) together, so an identifier or a rare word is found as well as a paraphrase. Scores are in [0, 1].',
        querystring: TenantQuery,
        body: SearchMemoryBody,
        response: { 200: SearchResponse, ...errorResponses({ not_found: 'No such agent.', upstream_error: 'The embedding provider failed or timed out.' }) },
      },
    },
    async (request) => {
      const { agent_id, query, memory_type, top_k, min_score, filter } = request.body;
      const answer = await app.agentMemory.memory.searchMemory(
        { agentId: agent_id, query, memoryType: memory_type, topK: top_k ?? 0, minScore: min_score, filterJson: jsonText(filter) },
        callAs(request),
      );
      return { results: answer.results.map(searchResultBody) };
    },
  );

  app.delete(
    '/:memory_id',
    {
      schema: {
        operationId: 'deleteMemory',
        tags,
        summary: 'Delete a memory item',
        params: MemoryParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.memory.deleteMemory({ memoryId: request.params.memory_id }, callAs(request));
      return { success: true as const, message: 'Memory item deleted.' };
    },
  );
  done();
};

export default memoryRoutes;
