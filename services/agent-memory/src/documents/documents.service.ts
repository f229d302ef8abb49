import { createHash } from 'node:crypto';
import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Logger, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { OutboundHttp, OutboundPolicy } from '@agent-platform/kit/security';
import type { AgentRecord } from '../agents/agents.entity.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { found, hasMemoryType } from '../agents/agents.service.js';
import type { Embedder } from '../models/embedder.js';
import { checkMetadata, checkText, checkTitle, checkUserId, DOCUMENT_MAX } from '../memory/memory-input.js';
import type { ChangeSource, NewMemoryItem } from '../memory/memory-items.js';
import type { MemoryRepository } from '../memory/memory.repository.js';
import type { MemoryService } from '../memory/memory.service.js';
import { chunkText } from './chunking.js';
import type { ClaimedDocument, DocumentOutcome, DocumentRecord, DocumentsRepository, StoredChunk } from './documents.repository.js';
import { fetchPage, PageFetchError } from './page-fetch.js';
import { chunkDocument, inspectDocument, parseDocument, type DocumentChunk, type DocumentFormat } from './parsing.js';

export interface DocumentsServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  documents: DocumentsRepository;
  memory: MemoryRepository;
  /** Stores chunks of texts and keeps the vector index in step. */
  memoryService: MemoryService;
  embedder: Embedder;
  /** Checks a page's URL when it is given; `http` checks every address it dials. */
  policy: OutboundPolicy;
  http: OutboundHttp;
  /** DOCUMENT_MAX_BYTES: the largest original, uploaded or fetched. */
  maxBytes: number;
  fetchTimeoutMs: number;
  /** How long a claim holds a document; renewed every third of it while the work goes on. */
  leaseMs: number;
  /** Tells this replica's workers that a document is due now. */
  wake: () => void;
  logger: Logger;
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

const DOCUMENT_CHANGE: ChangeSource = { source: 'document', sessionId: null };
/** A page is fetched again at most this often, and at least once a month. */
export const REFRESH_SECONDS_MIN = 60;
export const REFRESH_SECONDS_MAX = 2_592_000;
/** Tries of a document's work that fails for a passing reason (a time-out, the embedder down). */
const MAX_ATTEMPTS = 5;
const RETRY_INITIAL_MS = 5_000;
const RETRY_MAX_MS = 300_000;
/** A download is read from the database this much at a time. */
const FILE_PART_BYTES = 256 * 1024;
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';
const FILENAME_MAX = 255;

/**
 * Documents (decisions §17): texts chunked at once; files and pages parsed in the background by
 * `process`, which the replicas' workers call for each document they lease.
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
    await this.options.documents.insert(document, original, { dueAt: now, contentHash: null });
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
    await this.options.documents.insert(document, Buffer.alloc(0), { dueAt: now, contentHash: null });
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
    const chunkIds = await this.options.memory.deleteDocument(actor.tenantId, id, now);
    if (chunkIds === undefined) throw DomainError.notFound('Document');
    await this.options.memoryService.forgetVectors(chunkIds);
  }

  /**
   * A leased document's due work: fetch (a page) or read (a file) its original, parse and chunk
   * it, and when the chunks differ from those stored, embed the ones that changed and write them,
   * each change in its item's history, in one transaction with the document's outcome and event.
   */
  async process(document: ClaimedDocument, signal: AbortSignal, now = new Date()): Promise<void> {
    const { documents, leaseMs, logger } = this.options;
    const renewal = setInterval(() => {
      documents.renew(document, leaseMs).catch((error: unknown) => logger.warn({ err: error, document_id: document.id }, 'could not renew the lease of a document'));
    }, leaseMs / 3);
    try {
      await this.work(document, signal, now);
    } finally {
      clearInterval(renewal);
    }
  }

  private async work(document: ClaimedDocument, signal: AbortSignal, now: Date): Promise<void> {
    let original: { bytes: Buffer; contentType: string | null; format: DocumentFormat | 'plain_text' };
    let chunks: DocumentChunk[];
    let parsed: { title: string | null; pages: number | null };
    try {
      if (document.attempt > MAX_ATTEMPTS) throw new PageFetchError(`gave up after ${MAX_ATTEMPTS} attempts`, false);
      original = await this.original(document, signal);
      if (original.format === 'plain_text') {
        chunks = textChunks(original.bytes.toString('utf8'));
        parsed = { title: null, pages: null };
      } else {
        const parsedDocument = await parseDocument({ bytes: original.bytes, format: original.format, ...(document.url ? { url: document.url } : {}) });
        chunks = chunkDocument(parsedDocument);
        parsed = parsedDocument;
      }
      // Nothing to search or cite: failed, with why, rather than ready and empty.
      if (chunks.length === 0) throw new DomainError('unsupported_document', 'The document has no text to keep (a scanned PDF is only images; it needs text recognition first).');
    } catch (error) {
      await this.failed(document, error, now);
      return;
    }
    const hash = contentHash(chunks);
    const title = document.title ?? parsed.title ?? document.filename ?? document.url;
    const fetched = document.source === 'url' ? { contentType: original.contentType ?? undefined, bytes: original.bytes.length } : {};
    const outcome: DocumentOutcome = {
      status: 'ready',
      error: null,
      resetAttempts: true,
      ...(document.title === null ? { title } : {}),
      chunks: chunks.length,
      pages: parsed.pages,
      ...(fetched.contentType === undefined ? {} : { contentType: fetched.contentType }),
      ...(fetched.bytes === undefined ? {} : { bytes: fetched.bytes }),
      contentHash: hash,
      refreshed: true,
      dueAt: nextDue(document, now),
    };
    const changed = hash !== document.contentHash;
    let writes: Awaited<ReturnType<DocumentsService['chunkWrites']>> | undefined;
    try {
      // Embeds the new text: a provider that fails is a passing failure, tried again later.
      writes = changed ? await this.chunkWrites(document, { ...document, title }, chunks, now) : undefined;
    } catch (error) {
      await this.failed(document, error, now);
      return;
    }
    const finished = await this.options.em.transactional(async (tx) => {
      const record = await this.options.documents.finish(document, outcome, now);
      if (!record) return undefined;
      if (writes) await writes.apply();
      if (document.source === 'url') await this.options.documents.replaceFile(document.id, original.bytes);
      // A refresh someone asked for is always answered; a scheduled one is news only when the content changed.
      if (document.status === 'processing' || changed) await recordEvent(tx, newEvent('document.ready', document.tenantId, readyData(record, changed), now));
      return record;
    });
    if (!finished) {
      this.options.logger.info({ document_id: document.id }, 'document work dropped: its lease ran out or it was deleted meanwhile');
      return;
    }
    if (writes) await writes.indexed();
  }

  /** Hands a leased document back unprocessed (the worker was stopping). */
  release(document: ClaimedDocument): Promise<void> {
    return this.options.documents.release(document);
  }

  /** The original to parse, and its format: a page fetched now, a stored file, a stored text. */
  private async original(document: ClaimedDocument, signal: AbortSignal): Promise<{ bytes: Buffer; contentType: string | null; format: DocumentFormat | 'plain_text' }> {
    if (document.source === 'url') {
      const page = await fetchPage(this.options.http, document.url!, { timeoutMs: this.options.fetchTimeoutMs, maxBytes: this.options.maxBytes, signal });
      const { format, contentType } = await inspectDocument({ bytes: page.bytes, contentType: page.contentType, filename: new URL(page.url).pathname });
      return { bytes: page.bytes, contentType, format };
    }
    const bytes = await this.options.documents.file(document.id);
    if (document.source === 'text') return { bytes, contentType: document.contentType, format: 'plain_text' };
    const { format } = await inspectDocument({ bytes, contentType: document.contentType ?? '', filename: document.filename ?? '' });
    return { bytes, contentType: document.contentType, format };
  }

  /**
   * The writes that turn the stored chunks into `chunks`, position by position: a chunk whose text
   * is the same stays (its metadata follows), a changed one is updated in place (an UPDATE in its
   * history), extra ones are added or deleted. Only new text is embedded, before the transaction.
   */
  private async chunkWrites(claimed: ClaimedDocument, document: DocumentRecord, chunks: readonly DocumentChunk[], now: Date) {
    const { documents, memory, memoryService, embedder } = this.options;
    const stored = await documents.chunks(document.tenantId, document.id);
    const storedAt = new Map(stored.map((chunk) => [chunk.position, chunk]));
    const rewritten = chunks.filter((chunk) => storedAt.get(chunk.position)?.content !== chunk.text);
    const embeddings = rewritten.length === 0 ? [] : await embedder.embed(rewritten.map((chunk) => chunk.text));
    const vectors = new Map(rewritten.map((chunk, index) => [chunk.position, embeddings[index]!]));
    const positions = new Set(chunks.map((chunk) => chunk.position));
    const removed = stored.filter((chunk) => !positions.has(chunk.position)).map((chunk) => chunk.id);
    const indexed: Pick<NewMemoryItem, 'id' | 'tenantId' | 'agentId' | 'memoryType' | 'userId' | 'embedding'>[] = [];
    let addedRows = 0;
    return {
      apply: async () => {
        const added: NewMemoryItem[] = [];
        for (const chunk of chunks) {
          const metadata = chunkMetadata(document, chunk);
          const old = storedAt.get(chunk.position);
          const embedding = vectors.get(chunk.position);
          if (!old) {
            const item = { id: newId('memoryItem'), tenantId: document.tenantId, agentId: document.agentId, documentId: document.id, userId: document.userId, memoryType: 'semantic' as const, content: chunk.text, metadata, embedding: embedding!, embeddingModel: embedder.model, createdAt: now };
            added.push(item);
            indexed.push(item);
          } else if (embedding) {
            await memory.update(document.tenantId, old.id, { content: chunk.text, embedding, embeddingModel: embedder.model, metadata }, DOCUMENT_CHANGE, now);
            indexed.push({ id: old.id, tenantId: document.tenantId, agentId: document.agentId, memoryType: 'semantic', userId: document.userId, embedding });
          } else if (old.page !== chunk.page || old.heading.join('\u0000') !== chunk.heading.join('\u0000')) {
            await memory.update(document.tenantId, old.id, { metadata }, DOCUMENT_CHANGE, now);
          }
        }
        await memory.insert(added, DOCUMENT_CHANGE);
        addedRows = added.length;
        await memory.deleteItems(document.tenantId, removed, DOCUMENT_CHANGE, now);
      },
      /** After the commit: an index that fails leaves the rows, which search still finds by their words and stored vectors. */
      indexed: async () => {
        try {
          await memoryService.index(indexed);
        } catch (error) {
          this.options.logger.warn({ err: error, document_id: claimed.id }, 'chunks of a document were stored but not indexed; they are indexed at the next start');
        }
        await memoryService.forgetVectors(removed);
        memoryService.loaded(addedRows);
      },
    };
  }

  /** A try that failed: again later when the reason may pass, else the document fails (a page that was ready keeps its chunks). */
  private async failed(document: ClaimedDocument, error: unknown, now: Date): Promise<void> {
    const reason = failureReason(error);
    if (reason === undefined) throw error;
    const retry = reason.retryable && document.attempt < MAX_ATTEMPTS;
    // Parsed once already (a text, a page or file refreshed): it keeps the chunks it had.
    const keepsChunks = document.refreshedAt !== null;
    const outcome: DocumentOutcome = retry
      ? { status: document.status, error: reason.message, resetAttempts: false, refreshed: false, dueAt: new Date(now.getTime() + backoffMs(document.attempt)) }
      : keepsChunks
        ? { status: 'ready', error: reason.message, resetAttempts: true, refreshed: false, dueAt: nextDue(document, now) }
        : { status: 'failed', error: reason.message, resetAttempts: true, refreshed: false, dueAt: null };
    await this.options.em.transactional(async (tx) => {
      const record = await this.options.documents.finish(document, outcome, now);
      if (record && !retry) await recordEvent(tx, newEvent('document.failed', document.tenantId, failedData(record), now));
    });
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

/** A text is cut as it always was: by paragraphs, lines, sentences; no headings, no pages. */
function textChunks(content: string): DocumentChunk[] {
  return chunkText(content).map((text, position) => ({ text, heading: [], page: null, position }));
}

/** What a chunk's item carries: the document's metadata, then where in the document it is. */
function chunkMetadata(document: DocumentRecord, chunk: DocumentChunk): Record<string, unknown> {
  return {
    ...document.metadata,
    document_id: document.id,
    chunk_index: chunk.position,
    ...(document.title ? { title: document.title } : {}),
    ...(chunk.page === null ? {} : { page: chunk.page }),
    ...(chunk.heading.length === 0 ? {} : { heading: chunk.heading }),
  };
}

function contentHash(chunks: readonly DocumentChunk[]): string {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(JSON.stringify([chunk.text, chunk.page, chunk.heading]));
  return hash.digest('hex');
}

function nextDue(document: DocumentRecord, now: Date): Date | null {
  return document.refreshSeconds === null ? null : new Date(now.getTime() + document.refreshSeconds * 1000);
}

function backoffMs(attempt: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** (attempt - 1));
}

/** Why work on a document failed, fit to show its owner; undefined for a fault of the platform's own (retried after the lease). */
function failureReason(error: unknown): { message: string; retryable: boolean } | undefined {
  if (error instanceof PageFetchError) return { message: error.message, retryable: error.retryable };
  if (error instanceof DomainError) {
    if (error.code === 'unsupported_document' || error.code === 'payload_too_large') return { message: error.message, retryable: false };
    if (error.code === 'upstream_error' || error.code === 'service_unavailable') return { message: error.message, retryable: true };
  }
  return undefined;
}

/** decisions §17: what document.ready carries. */
function readyData(document: DocumentRecord, changed: boolean) {
  return {
    document_id: document.id,
    agent_id: document.agentId,
    title: document.title,
    source: document.source,
    url: document.url,
    chunks: document.chunks,
    pages: document.pages,
    changed,
  };
}

/** decisions §17: what document.failed carries; `status` ready: a refresh failed and the document keeps what it had. */
function failedData(document: DocumentRecord) {
  return { document_id: document.id, agent_id: document.agentId, title: document.title, source: document.source, url: document.url, status: document.status, error: document.error };
}
