import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { OutboundPolicy } from '@agent-platform/kit/security';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { found, hasMemoryType } from '../agents/agents.service.js';
import { checkMetadata, checkText, checkTitle, checkUserId, DOCUMENT_MAX } from '../memory/memory-input.js';
import type { MemoryBulkDeleteRepository } from '../memory/memory-bulk-delete.repository.js';
import type { MemoryService } from '../memory/memory.service.js';
import { chunkMetadata, contentHash, DOCUMENT_CHANGE, textChunks } from './document-chunks.js';
import type { DocumentRecord, DocumentsRepository, StoredChunk } from './documents.repository.js';
import { inspectDocument } from './parsing.js';

export interface DocumentsServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  documents: DocumentsRepository;
  bulkDeletes: MemoryBulkDeleteRepository;
  /** Stores a text's chunks and keeps the vector index in step. */
  memoryService: MemoryService;
  /** Checks a page's URL when it is given (the workers' fetch checks every address it dials). */
  policy: OutboundPolicy;
  /** DOCUMENT_MAX_BYTES: the largest upload. */
  maxBytes: number;
  /** Tells this replica's workers that a document is due now. */
  wake: () => void;
}

/** What an upload starts with, before its bytes. */
export interface UploadHeader {
  agentId: string;
  filename: string;
  contentType: string;
  title: string | undefined;
  metadataJson: string | undefined;
  userId: string | undefined;
}

/** A message of an upload: its header, or the next piece of the file. */
export type UploadPart = { header: UploadHeader } | { data: Uint8Array };

/** The original of a document: its description, then its bytes as they are read. */
export interface DocumentFile {
  contentType: string;
  filename: string | null;
  bytes: number;
  parts: AsyncIterable<Buffer>;
}

/** A page is fetched again at most this often, and at least once a month. */
export const REFRESH_SECONDS_MIN = 60;
export const REFRESH_SECONDS_MAX = 2_592_000;
/** A download is read from the database this much at a time. */
const FILE_PART_BYTES = 256 * 1024;
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';
const FILENAME_MAX = 255;

/**
 * Documents (decisions §17) as the API takes them: texts chunked at once; files and pages stored
 * `processing` for the replicas' workers (DocumentWork).
 */
export class DocumentsService {
  private readonly options: DocumentsServiceOptions;

  constructor(options: DocumentsServiceOptions) {
    this.options = options;
  }

  /** A text, chunked and stored now: the document answers `ready`. */
  async addText(
    actor: Actor,
    request: { agentId: string; title: string | undefined; content: string; metadataJson: string | undefined; userId: string | undefined },
    now = new Date(),
  ): Promise<DocumentRecord> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    const { title, metadata, userId } = checkDocumentFields(agent, request, errors);
    checkText('content', request.content, DOCUMENT_MAX, errors);
    errors.throwIfAny();
    const chunks = textChunks(request.content);
    const original = Buffer.from(request.content);
    const document: DocumentRecord = {
      ...this.newDocument(actor, agent, { title, metadata, userId, source: 'text', contentType: TEXT_CONTENT_TYPE, filename: null, bytes: original.length, url: null, refreshSeconds: null }, now),
      status: 'ready',
      chunks: chunks.length,
      refreshedAt: now,
    };
    await this.options.memoryService.store(
      agent,
      chunks.map((chunk) => ({ memoryType: 'semantic', content: chunk.text, documentId: document.id, userId, metadata: chunkMetadata(document, chunk) })),
      now,
      DOCUMENT_CHANGE,
      {
        documentId: document.id,
        alongside: () => this.options.documents.insert(document, original, { dueAt: null, contentHash: contentHash(chunks) }),
      },
    );
    this.options.memoryService.loaded(chunks.length);
    return document;
  }

  /**
   * A file, read as it arrives up to DOCUMENT_MAX_BYTES, with its header (before or after the
   * bytes: a form's fields may follow its file), checked to be what it claims, then stored with
   * the document `processing`. Nothing is stored when any of that fails.
   */
  async upload(actor: Actor, parts: AsyncIterable<UploadPart>, now = new Date()): Promise<DocumentRecord> {
    requireAccess(actor, ACCESS.memory.write);
    const chunks: Uint8Array[] = [];
    let size = 0;
    let header: UploadHeader | undefined;
    for await (const part of parts) {
      if ('header' in part) {
        if (header) throw new DomainError('invalid_request', 'An upload has one header.');
        header = part.header;
        continue;
      }
      size += part.data.length;
      if (size > this.options.maxBytes) throw new DomainError('payload_too_large', `The file exceeds ${this.options.maxBytes} bytes (DOCUMENT_MAX_BYTES).`);
      chunks.push(part.data);
    }
    if (!header) throw new DomainError('invalid_request', 'An upload needs its header (agent_id and the rest).');
    const agent = await this.agent(actor, header.agentId);
    const errors = new FieldErrors();
    const { title, metadata, userId } = checkDocumentFields(agent, header, errors);
    if (header.filename.length > FILENAME_MAX) errors.add('file', `must have a file name of at most ${FILENAME_MAX} characters`);
    errors.throwIfAny();
    const original = Buffer.concat(chunks, size);
    if (original.length === 0) throw new DomainError('unsupported_document', 'The file is empty.');
    const { contentType } = await inspectDocument({ bytes: original, contentType: header.contentType, filename: header.filename });
    const document = this.newDocument(
      actor,
      agent,
      { title, metadata, userId, source: 'upload', contentType, filename: header.filename || null, bytes: original.length, url: null, refreshSeconds: null },
      now,
    );
    await this.options.em.transactional(() => this.options.documents.insert(document, original, { dueAt: now, contentHash: null }));
    this.options.wake();
    return document;
  }

  /** A web page, fetched in the background (and again every `refreshSeconds` when given). */
  async addPage(
    actor: Actor,
    request: { agentId: string; url: string; refreshSeconds: number | undefined; title: string | undefined; metadataJson: string | undefined; userId: string | undefined },
    now = new Date(),
  ): Promise<DocumentRecord> {
    requireAccess(actor, ACCESS.memory.write);
    const agent = await this.agent(actor, request.agentId);
    const errors = new FieldErrors();
    const { title, metadata, userId } = checkDocumentFields(agent, request, errors);
    const url = request.url.trim();
    const problem = await this.options.policy.checkUrl(url);
    if (problem !== undefined) errors.add('url', problem);
    const refreshSeconds = request.refreshSeconds ?? null;
    if (refreshSeconds !== null && (!Number.isSafeInteger(refreshSeconds) || refreshSeconds < REFRESH_SECONDS_MIN || refreshSeconds > REFRESH_SECONDS_MAX)) {
      errors.add('refresh_seconds', `must be a whole number of seconds from ${REFRESH_SECONDS_MIN} to ${REFRESH_SECONDS_MAX.toLocaleString('en')}`);
    }
    errors.throwIfAny();
    const document = this.newDocument(actor, agent, { title, metadata, userId, source: 'url', contentType: null, filename: null, bytes: 0, url, refreshSeconds }, now);
    await this.options.em.transactional(() => this.options.documents.insert(document, Buffer.alloc(0), { dueAt: now, contentHash: null }));
    this.options.wake();
    return document;
  }

  async get(actor: Actor, id: string): Promise<DocumentRecord> {
    requireAccess(actor, ACCESS.memory.read);
    return this.document(actor, id);
  }

  async list(actor: Actor, agentId: string, page: Page): Promise<{ documents: DocumentRecord[]; total: number }> {
    requireAccess(actor, ACCESS.memory.read);
    await this.agent(actor, agentId);
    return this.options.documents.list(actor.tenantId, agentId, page.perPage, page.offset);
  }

  async chunks(actor: Actor, id: string, page: Page): Promise<{ chunks: StoredChunk[]; total: number }> {
    requireAccess(actor, ACCESS.memory.read);
    const document = await this.document(actor, id);
    return { chunks: await this.options.documents.chunks(actor.tenantId, id, page.perPage, page.offset), total: document.chunks };
  }

  /** The original as stored, read a range at a time; a page's, as last fetched. */
  async file(actor: Actor, id: string): Promise<DocumentFile> {
    requireAccess(actor, ACCESS.memory.read);
    const document = await this.document(actor, id);
    const { documents } = this.options;
    const size = (await documents.fileSize(actor.tenantId, id)) ?? 0;
    async function* parts(): AsyncGenerator<Buffer> {
      for (let offset = 0; offset < size; offset += FILE_PART_BYTES) {
        const part = await documents.fileRange(actor.tenantId, id, offset, FILE_PART_BYTES);
        // Deleted (or replaced by a shorter fetch) meanwhile: what was read is all there is.
        if (part.length === 0) return;
        yield part;
      }
    }
    return { contentType: document.contentType ?? 'application/octet-stream', filename: document.filename, bytes: size, parts: parts() };
  }

  /** Parses the document again in the background; a page is fetched again. */
  async refresh(actor: Actor, id: string, now = new Date()): Promise<DocumentRecord> {
    requireAccess(actor, ACCESS.memory.write);
    const document = await this.options.documents.requestRefresh(actor.tenantId, id, now);
    if (!document) throw DomainError.notFound('Document');
    this.options.wake();
    return document;
  }

  async delete(actor: Actor, id: string, now = new Date()): Promise<void> {
    requireAccess(actor, ACCESS.memory.write);
    const chunkIds = await this.options.bulkDeletes.deleteDocument(actor.tenantId, id, now);
    if (chunkIds === undefined) throw DomainError.notFound('Document');
    await this.options.memoryService.forgetVectors(chunkIds);
  }

  private newDocument(
    actor: Actor,
    agent: AgentRecord,
    fields: Pick<DocumentRecord, 'title' | 'metadata' | 'userId' | 'source' | 'contentType' | 'filename' | 'bytes' | 'url' | 'refreshSeconds'>,
    now: Date,
  ): DocumentRecord {
    return { id: newId('document'), tenantId: actor.tenantId, agentId: agent.id, status: 'processing', error: null, pages: null, chunks: 0, refreshedAt: null, createdAt: now, ...fields };
  }

  private async document(actor: Actor, id: string): Promise<DocumentRecord> {
    const document = await this.options.documents.find(actor.tenantId, id);
    if (!document) throw DomainError.notFound('Document');
    return document;
  }

  private async agent(actor: Actor, agentId: string): Promise<AgentRecord> {
    return found(await this.options.agents.find(actor.tenantId, agentId));
  }
}

/** What every kind of document is given besides its content: checked alike, each refusal named. */
function checkDocumentFields(
  agent: AgentRecord,
  fields: { title: string | undefined; metadataJson: string | undefined; userId: string | undefined },
  errors: FieldErrors,
): { title: string | null; metadata: Record<string, unknown>; userId: string | null } {
  if (!hasMemoryType(agent, 'semantic')) errors.add('agent_id', 'the agent keeps no semantic memory, where documents are stored');
  return {
    title: fields.title === undefined ? null : checkTitle(fields.title, errors),
    metadata: checkMetadata(fields.metadataJson, errors),
    userId: checkUserId(fields.userId, errors) ?? null,
  };
}
