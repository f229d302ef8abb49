import type { Document, DocumentChunk } from '@agent-platform/proto/agents/v1/documents';
import { z } from 'zod';
import { EndUserId, iso, isoOrNull, pathId, Paging, TenantQuery, Timestamp } from '../../../../../http/schemas.js';
import { AgentId, Metadata, metadataOf } from '../schemas.js';

// The gateway checks shapes and types; agent-memory decides the rest (lengths, the agent's memory
// types, whether a URL may be fetched, what a file is) and names the field.

export const DocumentParams = z.object({ document_id: pathId('document', 'doc') });

const Title = z.string().describe("Up to 500 characters; copied into each chunk's metadata. Absent: the document's own title (a PDF's, a page's), else the file name or URL.");
const UserId = EndUserId.describe("The end user the document belongs to: only their turns and searches see its chunks. Absent: shared by every end user.");

/** decisions §17 (and §5 for texts): a text, or a web page to fetch; a file comes as multipart/form-data. */
export const AddDocumentBody = z
  .object({
    agent_id: AgentId,
    title: Title.optional(),
    content: z.string().optional().describe('A text, 1..1,000,000 characters: chunked (with overlap) now. Give this or url.'),
    url: z.string().optional().describe('A web page (http or https) to fetch in the background, through the outbound guard, and keep the main text of. Give this or content.'),
    refresh_seconds: z
      .int()
      .optional()
      .describe('With url: fetch the page again this often (60..2,592,000 seconds); its chunks change only when its text did.'),
    metadata: Metadata.optional().describe('Copied onto every chunk, beside document_id and chunk_index.'),
    user_id: UserId.optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.content === undefined) === (body.url === undefined)) ctx.addIssue({ code: 'custom', path: ['content'], message: 'give content (a text) or url (a web page), one of them' });
    if (body.refresh_seconds !== undefined && body.url === undefined) ctx.addIssue({ code: 'custom', path: ['refresh_seconds'], message: 'applies to a web page (url) only' });
  })
  .meta({
    examples: [
      { agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', title: 'Returns policy', content: 'Items can be returned within 30 days of delivery…', metadata: { version: 3 } },
      { agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', url: 'https://help.example.com/returns', refresh_seconds: 86_400 },
    ],
  });

/** The fields of an upload's form, as text, beside its `file`. */
export const UploadFields = z.object({
  agent_id: AgentId,
  title: Title.optional(),
  metadata: z
    .string()
    .optional()
    .describe('A JSON object, as text: copied onto every chunk.'),
  user_id: UserId.optional(),
});

/** The multipart form as OpenAPI shows it (the route reads it as a stream, part by part). */
export const UploadForm = UploadFields.extend({
  file: z.string().meta({ format: 'binary' }).describe('PDF, DOCX, HTML, Markdown, plain text, CSV or JSON, up to DOCUMENT_MAX_BYTES (20 MiB).'),
});

export const DocumentListQuery = TenantQuery.extend({ agent_id: AgentId, ...Paging.shape });

export const DocumentSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    title: z.string().nullable(),
    source: z.enum(['text', 'upload', 'url']).describe('text: posted as content; upload: a file; url: a web page.'),
    status: z.enum(['processing', 'ready', 'failed']).describe('processing until parsed (again, after a refresh someone asked for); ready; failed, with error.'),
    error: z.string().nullable().describe('Why it failed; or, while it stays ready, why its last refresh failed.'),
    content_type: z.string().nullable().describe('Of the original; null for a page not fetched yet.'),
    filename: z.string().nullable(),
    url: z.string().nullable(),
    refresh_seconds: z.int().nullable(),
    bytes: z.int().describe('Size of the original.'),
    chunks: z.int().describe('The semantic memory items made of it; each carries metadata.document_id.'),
    pages: z.int().nullable().describe('Pages of a paginated original (PDF).'),
    metadata: z.record(z.string(), z.unknown()),
    user_id: z.string().nullable(),
    created_at: Timestamp,
    refreshed_at: Timestamp.nullable().describe('When its content was last parsed (a page: fetched).'),
  })
  .meta({ id: 'MemoryDocument', description: "A document of an agent's memory: a text, a file or a web page, stored as chunks." });

export const DocumentChunkSchema = z
  .object({
    id: z.string().describe('The memory item holding the chunk.'),
    position: z.int().describe('Its place in the document, from 0 (metadata.chunk_index).'),
    text: z.string(),
    page: z.int().nullable().describe('The page it starts on (PDF).'),
    heading: z.array(z.string()).describe('The headings it is under, outermost first.'),
  })
  .meta({ id: 'DocumentChunk' });

/** The REST document of a gRPC answer; its absence is an upstream defect (500). */
export function documentBody(document: Document | undefined): z.output<typeof DocumentSchema> {
  if (!document) throw new Error('agent-memory answered without the document.');
  return {
    id: document.id,
    agent_id: document.agentId,
    title: document.title ?? null,
    source: document.source as 'text' | 'upload' | 'url',
    status: document.status as 'processing' | 'ready' | 'failed',
    error: document.error ?? null,
    content_type: document.contentType ?? null,
    filename: document.filename ?? null,
    url: document.url ?? null,
    refresh_seconds: document.refreshSeconds ?? null,
    bytes: document.bytes,
    chunks: document.chunks,
    pages: document.pages ?? null,
    metadata: metadataOf(document.metadataJson),
    user_id: document.userId ?? null,
    created_at: iso(document.createdAt),
    refreshed_at: isoOrNull(document.refreshedAt),
  };
}

export function chunkBody(chunk: DocumentChunk): z.output<typeof DocumentChunkSchema> {
  return { id: chunk.id, position: chunk.position, text: chunk.text, page: chunk.page ?? null, heading: chunk.heading };
}

export const CitationSchema = z
  .object({
    index: z.int().describe('The [n] the answer cites it by: its place among the turn\'s memories, from 1.'),
    document_id: z.string(),
    chunk_id: z.string().describe('The memory item holding the chunk (GET /memory/documents/{document_id}/chunks lists it).'),
    title: z.string().nullable(),
    page: z.int().nullable(),
    heading: z.array(z.string()).describe('The headings it is under, outermost first.'),
    snippet: z.string().describe("The chunk's opening words."),
  })
  .meta({ id: 'Citation', description: 'A document chunk a turn was given (decisions §17).' });

/** Shown beside `memories` wherever a turn's answer is. */
export const Citations = z.array(CitationSchema).describe('The document chunks among `memories`, in the same order; the answer quotes them as [index].');
