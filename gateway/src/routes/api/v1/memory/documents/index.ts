import { Readable } from 'node:stream';
import { DomainError } from '@agent-platform/kit';
import type { UploadDocumentRequest } from '@agent-platform/proto/agents/v1/documents';
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { pageOf, PageQuery, SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import { formOrJsonValidatorCompiler, parseForPeople, requestError } from '../../../../../http/validation.js';
import { jsonText } from '../schemas.js';
import { AddDocumentBody, chunkBody, DocumentChunkSchema, documentBody, DocumentListQuery, DocumentParams, DocumentSchema, UploadFields } from './schemas.js';

/** Room for a form's boundaries, headers and fields around its file. */
const FORM_OVERHEAD_BYTES = 256 * 1024;
/** A form field's value (metadata is the largest: 16 KiB of JSON). */
const FIELD_MAX_BYTES = 64 * 1024;
/** What is read of an upload's rest after it was refused, so the client can read the answer. */
const DRAIN_MAX_BYTES = 64 * 1_048_576;

/**
 * /memory/documents (decisions §17): texts chunked at once; files (multipart/form-data, streamed
 * to agent-memory as they arrive) and web pages parsed in the background; their chunks, originals
 * and refreshes.
 */
const documentRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['memory'];
  const maxBytes = app.config.DOCUMENT_MAX_BYTES;
  // Encapsulated: only these routes read forms; everywhere else a form is 400 like any non-JSON body.
  void app.register(multipart, { limits: { fileSize: maxBytes, files: 1, fields: 8, fieldSize: FIELD_MAX_BYTES, parts: 9 } });
  // A form leaves the body absent (the route reads it part by part as it streams); JSON is validated as everywhere.
  app.setValidatorCompiler(formOrJsonValidatorCompiler);

  app.post(
    '',
    {
      // A form streams past the body limit (busboy holds its file to DOCUMENT_MAX_BYTES); JSON keeps BODY_LIMIT_BYTES.
      config: { formBodyLimit: maxBytes + FORM_OVERHEAD_BYTES },
      schema: {
        operationId: 'addDocument',
        tags,
        summary: "Add a document to an agent's memory: a text, a file or a web page",
        description: [
          'A text (`content`) is chunked now: 201 with the document `ready`.',
          'A file (multipart/form-data: `file`, `agent_id`, optional `title`, `metadata` as JSON text and `user_id`; PDF, DOCX, HTML, Markdown, plain text, CSV or JSON, up to DOCUMENT_MAX_BYTES) or a web page (`url`, optional `refresh_seconds`) answers 202 with the document `processing`: it is parsed in the background and becomes `ready` (event document.ready) or `failed` with a reason (document.failed).',
          'Chunks keep their heading path and page; table rows are never split; neighbours overlap. Each chunk is a semantic memory item carrying metadata.document_id and chunk_index.',
        ].join(' '),
        querystring: TenantQuery,
        body: AddDocumentBody,
        response: {
          201: DocumentSchema.describe('A text, chunked and stored.'),
          202: DocumentSchema.describe('A file or a page, stored and being parsed.'),
          ...errorResponses({
            not_found: 'No such agent.',
            payload_too_large: 'The file exceeds DOCUMENT_MAX_BYTES (20 MiB by default).',
            unsupported_document: 'A type the platform cannot read, or a file that is not what it claims: an encrypted PDF, a broken DOCX, a renamed binary.',
            upstream_error: 'The embedding provider failed or timed out (a text).',
          }),
        },
      },
    },
    async (request, reply) => {
      if (request.isMultipart()) {
        const call = { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS };
        try {
          const answer = await app.agentMemory.documents.uploadDocument(uploadMessages(request, maxBytes), call);
          return await reply.code(202).send(documentBody(answer.document));
        } catch (error) {
          await drained(request);
          throw error;
        }
      }
      // The validator let an empty body through, for a form; without a form it is a missing one.
      if (request.body === undefined || request.body === null) throw new DomainError('invalid_request', 'The request body must be a JSON object or a multipart/form-data upload.');
      const { agent_id, title, content, url, refresh_seconds, metadata, user_id } = request.body;
      const metadataJson = jsonText(metadata);
      if (content !== undefined) {
        // A large text is many chunks to embed: it waits as long as a model call may.
        const call = { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS };
        const answer = await app.agentMemory.documents.addTextDocument({ agentId: agent_id, title, content, metadataJson, userId: user_id }, call);
        return reply.code(201).send(documentBody(answer.document));
      }
      const answer = await app.agentMemory.documents.addPageDocument(
        { agentId: agent_id, url: url ?? '', refreshSeconds: refresh_seconds, title, metadataJson, userId: user_id },
        callAs(request),
      );
      return reply.code(202).send(documentBody(answer.document));
    },
  );

  app.get(
    '',
    {
      schema: {
        operationId: 'listDocuments',
        tags,
        summary: "List an agent's documents, newest first, with their status",
        querystring: DocumentListQuery,
        response: { 200: pageOf(DocumentSchema), ...errorResponses({ not_found: 'No such agent.' }) },
      },
    },
    async (request) => {
      const { agent_id, page, per_page } = request.query;
      const answer = await app.agentMemory.documents.listDocuments({ agentId: agent_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.documents.map(documentBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/:document_id',
    {
      schema: {
        operationId: 'getDocument',
        tags,
        summary: 'Get a document and its status',
        params: DocumentParams,
        querystring: TenantQuery,
        response: { 200: DocumentSchema },
      },
    },
    async (request) => {
      const answer = await app.agentMemory.documents.getDocument({ documentId: request.params.document_id }, callAs(request));
      return documentBody(answer.document);
    },
  );

  app.get(
    '/:document_id/chunks',
    {
      schema: {
        operationId: 'listDocumentChunks',
        tags,
        summary: "A document's chunks in document order, each with its page and heading path",
        params: DocumentParams,
        querystring: PageQuery,
        response: { 200: pageOf(DocumentChunkSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.documents.listDocumentChunks({ documentId: request.params.document_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.chunks.map(chunkBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/:document_id/file',
    {
      schema: {
        operationId: 'getDocumentFile',
        tags,
        summary: 'Download the original: the uploaded file, the page as last fetched, or the text',
        params: DocumentParams,
        querystring: TenantQuery,
        response: {
          200: {
            description: 'The original, as an attachment, with the content type it was stored as.',
            content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const stream = app.agentMemory.documents.readDocumentFile({ documentId: request.params.document_id }, callAs(request))[Symbol.asyncIterator]();
      // The head comes first: a document that is not the caller's fails here, before any header is sent.
      const first = await stream.next();
      const head = first.done ? undefined : first.value.head;
      if (!head) throw new Error('agent-memory answered a file without its head.');
      return sendAttachment(reply, { ...head, filename: head.filename ?? request.params.document_id }, Readable.from(fileData(stream)));
    },
  );

  app.post(
    '/:document_id/refresh',
    {
      schema: {
        operationId: 'refreshDocument',
        tags,
        summary: 'Parse a document again (fetch a page again) in the background',
        description: 'Answers 202 with the document `processing`; its chunks answer searches meanwhile, and change only where its text did (each change in the items\' history, source `document`).',
        params: DocumentParams,
        querystring: TenantQuery,
        response: { 202: DocumentSchema },
      },
    },
    async (request, reply) => {
      const answer = await app.agentMemory.documents.refreshDocument({ documentId: request.params.document_id }, callAs(request));
      return reply.code(202).send(documentBody(answer.document));
    },
  );

  app.delete(
    '/:document_id',
    {
      schema: {
        operationId: 'deleteDocument',
        tags,
        summary: 'Delete a document, every chunk of it and its original',
        params: DocumentParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.documents.deleteDocument({ documentId: request.params.document_id }, callAs(request));
      return { success: true as const, message: 'Document deleted, with its chunks.' };
    },
  );
  done();
};

/**
 * The form as upload messages, as it streams: the file's pieces as they arrive (busboy stops at
 * DOCUMENT_MAX_BYTES with a 413), then the header from the fields, whichever side of the file
 * they came.
 */
async function* uploadMessages(request: FastifyRequest, maxBytes: number): AsyncGenerator<UploadDocumentRequest> {
  const fields: Record<string, string> = {};
  let file: { filename: string; mimetype: string } | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.valueTruncated) throw DomainError.validation([{ field: part.fieldname, message: `must be at most ${FIELD_MAX_BYTES} bytes` }]);
        fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== 'file') throw DomainError.validation([{ field: part.fieldname, message: 'is not a field of the form; the file goes in `file`' }]);
      file = { filename: part.filename, mimetype: part.mimetype };
      for await (const data of part.file as AsyncIterable<Buffer>) yield { data };
    }
  } catch (error) {
    throw formError(error, maxBytes);
  }
  if (!file) throw DomainError.validation([{ field: 'file', message: 'is required' }]);
  const parsed = parseForPeople(UploadFields, fields);
  if (!parsed.success) throw requestError(parsed.error.issues, 'form');
  const { agent_id, title, metadata, user_id } = parsed.data;
  yield { header: { agentId: agent_id, filename: file.filename, contentType: file.mimetype, title, metadataJson: metadata, userId: user_id } };
}

/** What a form that could not be read answers (decisions §2), in the words of the one limit it broke. */
function formError(error: unknown, maxBytes: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new DomainError('payload_too_large', `The file exceeds ${maxBytes} bytes (DOCUMENT_MAX_BYTES).`);
    case 'FST_FILES_LIMIT':
      return new DomainError('invalid_request', 'A form uploads one file, in `file`.');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new DomainError('invalid_request', 'The form has more fields than an upload takes: file, agent_id, title, metadata and user_id.');
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_MP_PREMATURE_CLOSE':
      return new DomainError('invalid_request', 'The multipart/form-data body cannot be read.');
    default:
      // Busboy's own refusals (no boundary, a malformed part) are plain Errors.
      return error instanceof Error && !(error instanceof DomainError) && code === undefined ? new DomainError('invalid_request', `The multipart/form-data body cannot be read: ${error.message}.`) : error;
  }
}

async function* fileData(stream: AsyncIterator<{ data?: Buffer | undefined }>): AsyncGenerator<Buffer> {
  for (let next = await stream.next(); !next.done; next = await stream.next()) if (next.value.data) yield next.value.data;
}

/**
 * A download: the stored type (never sniffed into something a browser would run), the size, and
 * the name as `attachment; filename="…"` made safe for the header, with its UTF-8 form (RFC 6266).
 */
function sendAttachment(reply: FastifyReply, file: { contentType: string; bytes: number; filename: string }, body: Readable): FastifyReply {
  const plain = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return reply
    .header('content-type', file.contentType)
    .header('content-length', String(file.bytes))
    .header('content-disposition', `attachment; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`)
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

/**
 * An upload refused part-way (too large, not what it claims) leaves the rest of the form unread:
 * reading it, up to a bound, lets a client that sends it whole before reading (fetch) see the
 * answer rather than a reset connection.
 */
async function drained(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.readableEnded || raw.destroyed) return;
  let read = 0;
  try {
    for await (const chunk of raw as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > DRAIN_MAX_BYTES) break;
    }
  } catch {
    // The client went away: there is no one to answer.
  }
}

export default documentRoutes;
