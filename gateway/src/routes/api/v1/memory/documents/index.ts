import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import { AddDocumentBody, documentBody, DocumentParams, DocumentSchema, jsonText } from '../schemas.js';

/** /memory/documents: texts stored in an agent's semantic memory as chunks. */
const documentRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['memory'];

  app.post(
    '',
    {
      schema: {
        operationId: 'addDocument',
        tags,
        summary: "Add a document to an agent's memory, chunked into semantic memory items",
        description:
          'Each chunk is a semantic memory item whose metadata carries document_id and chunk_index (and title, and the metadata sent). The agent must keep semantic memory (422 naming agent_id otherwise).',
        querystring: TenantQuery,
        body: AddDocumentBody,
        response: { 201: DocumentSchema, ...errorResponses({ not_found: 'No such agent.', upstream_error: 'The embedding provider failed or timed out.' }) },
      },
    },
    async (request, reply) => {
      const { agent_id, title, content, metadata } = request.body;
      // A large document is many chunks to embed: it waits as long as a model call may.
      const call = { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS };
      const answer = await app.agentMemory.memory.addDocument({ agentId: agent_id, title, content, metadataJson: jsonText(metadata) }, call);
      return reply.code(201).send(documentBody(answer.document));
    },
  );

  app.delete(
    '/:document_id',
    {
      schema: {
        operationId: 'deleteDocument',
        tags,
        summary: 'Delete a document and every chunk of it',
        params: DocumentParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.memory.deleteDocument({ documentId: request.params.document_id }, callAs(request));
      return { success: true as const, message: 'Document deleted, with its chunks.' };
    },
  );
  done();
};

export default documentRoutes;
