import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { pageOf, SuccessSchema, TenantQuery } from '../../../../http/schemas.js';
import {
  AddMemoryBody,
  BulkDeleteQuery,
  BulkDeleteResponse,
  historyBody,
  HistoryResponse,
  jsonText,
  memoryItemBody,
  MemoryItemSchema,
  MemoryListQuery,
  MemoryParams,
  SearchMemoryBody,
  SearchResponse,
  searchResultBody,
  UpdateMemoryBody,
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
      const { agent_id, memory_type, content, metadata, user_id } = request.body;
      const answer = await app.agentMemory.memory.addMemory(
        { agentId: agent_id, memoryType: memory_type, content, metadataJson: jsonText(metadata), userId: user_id },
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
      const { agent_id, memory_type, user_id, session_id, page, per_page } = request.query;
      const answer = await app.agentMemory.memory.listMemory(
        { agentId: agent_id, memoryType: memory_type, userId: user_id, sessionId: session_id, page: { page, perPage: per_page } },
        callAs(request),
      );
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
      const { agent_id, query, memory_type, top_k, min_score, filter, user_id } = request.body;
      const answer = await app.agentMemory.memory.searchMemory(
        { agentId: agent_id, query, memoryType: memory_type, topK: top_k ?? 0, minScore: min_score, filterJson: jsonText(filter), userId: user_id },
        callAs(request),
      );
      return { results: answer.results.map(searchResultBody) };
    },
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteMemoryItems',
        tags,
        summary: "Delete an agent's memory items in bulk",
        description:
          "Every item of the agent matching the filters: with user_id, that end user's items only (never the shared ones), so an end user can be forgotten in one call. Each deletion is recorded in the item's history; the items leave search at once.",
        querystring: BulkDeleteQuery,
        response: { 200: BulkDeleteResponse, ...errorResponses({ not_found: 'No such agent.' }) },
      },
    },
    async (request) => {
      const { agent_id, user_id, memory_type } = request.query;
      const answer = await app.agentMemory.memory.deleteMemoryItems({ agentId: agent_id, userId: user_id, memoryType: memory_type }, callAs(request));
      return { deleted: answer.deleted };
    },
  );

  app.patch(
    '/:memory_id',
    {
      schema: {
        operationId: 'updateMemory',
        tags,
        summary: 'Change a memory item',
        description: 'New content is re-embedded; metadata is replaced whole. The change is recorded in the item\'s history (source api).',
        params: MemoryParams,
        querystring: TenantQuery,
        body: UpdateMemoryBody,
        response: { 200: MemoryItemSchema, ...errorResponses({ not_found: 'No such memory item.', upstream_error: 'The embedding provider failed or timed out.' }) },
      },
    },
    async (request) => {
      const { content, metadata } = request.body;
      const answer = await app.agentMemory.memory.updateMemory({ memoryId: request.params.memory_id, content, metadataJson: jsonText(metadata) }, callAs(request));
      return memoryItemBody(answer.item);
    },
  );

  app.get(
    '/:memory_id/history',
    {
      schema: {
        operationId: 'getMemoryHistory',
        tags,
        summary: "A memory item's history, oldest first",
        description: 'Every change: ADD, UPDATE, DELETE, with the content before and after and what made it (api, extraction, consolidation, document). Kept after the item is deleted.',
        params: MemoryParams,
        querystring: TenantQuery,
        response: { 200: HistoryResponse, ...errorResponses({ not_found: 'No such memory item.' }) },
      },
    },
    async (request) => {
      const answer = await app.agentMemory.memory.getMemoryHistory({ memoryId: request.params.memory_id }, callAs(request));
      return historyBody(request.params.memory_id, answer.entries);
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
