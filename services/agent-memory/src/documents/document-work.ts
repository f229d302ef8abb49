import { DomainError, newId, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { OutboundHttp } from '@agent-platform/kit/security';
import type { Embedder } from '../models/embedder.js';
import { embeddedText } from '../memory/embedded-text.js';
import type { NewMemoryItem } from '../memory/memory-items.js';
import type { MemoryBulkDeleteRepository } from '../memory/memory-bulk-delete.repository.js';
import type { MemoryRepository } from '../memory/memory.repository.js';
import type { MemoryService } from '../memory/memory.service.js';
import { chunkMetadata, contentHash, DOCUMENT_CHANGE } from './document-chunks.js';
import type { ClaimedDocument, DocumentOutcome, DocumentRecord, DocumentsRepository } from './documents.repository.js';
import { fetchPage, PageFetchError } from './page-fetch.js';
import type { DocumentReader } from './document-reader.js';
import type { DocumentChunk } from './parsing.js';
import type { Original, ReadDocument } from './reading.js';

export interface DocumentWorkOptions {
  em: EntityManager;
  documents: DocumentsRepository;
  memory: MemoryRepository;
  bulkDeletes: MemoryBulkDeleteRepository;
  /** Keeps the vector index in step with the chunks written. */
  memoryService: MemoryService;
  embedder: Embedder;
  /** Reads originals into chunks, off the service's thread. */
  reader: DocumentReader;
  /** Dials every address through the outbound guard. */
  http: OutboundHttp;
  /** DOCUMENT_MAX_BYTES: the largest page fetched. */
  maxBytes: number;
  fetchTimeoutMs: number;
  /** How long a claim holds a document; renewed every third of it while the work goes on. */
  leaseMs: number;
  logger: Logger;
}

/** Tries of a document's work that fails for a passing reason (a time-out, the embedder down). */
const MAX_ATTEMPTS = 5;
const RETRY_INITIAL_MS = 5_000;
const RETRY_MAX_MS = 300_000;

/**
 * The background half of documents (decisions §17): what a replica's workers do with each document
 * they lease: the first parse of a file or page, a refresh asked for, a page's next fetch.
 */
export class DocumentWork {
  private readonly options: DocumentWorkOptions;

  constructor(options: DocumentWorkOptions) {
    this.options = options;
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
    let original: Original & { bytes: Buffer };
    let read: ReadDocument;
    try {
      if (document.attempt > MAX_ATTEMPTS) throw new PageFetchError(`gave up after ${MAX_ATTEMPTS} attempts`, false);
      original = await this.original(document, signal);
      read = await this.options.reader.read(original, signal);
      // Nothing to search or cite: failed, with why, rather than ready and empty.
      if (read.chunks.length === 0) throw new DomainError('unsupported_document', 'The document has no text to keep (a scanned PDF is only images; it needs text recognition first).');
    } catch (error) {
      await this.failed(document, error, now);
      return;
    }
    const { chunks } = read;
    const hash = contentHash(chunks);
    const title = document.title ?? read.title ?? document.filename ?? document.url;
    const fetched = document.source === 'url' ? { contentType: read.contentType ?? undefined, bytes: original.bytes.length } : {};
    const outcome: DocumentOutcome = {
      status: 'ready',
      error: null,
      resetAttempts: true,
      ...(document.title === null ? { title } : {}),
      chunks: chunks.length,
      pages: read.pages,
      ...(fetched.contentType === undefined ? {} : { contentType: fetched.contentType }),
      ...(fetched.bytes === undefined ? {} : { bytes: fetched.bytes }),
      contentHash: hash,
      refreshed: true,
      dueAt: nextDue(document, now),
    };
    const changed = hash !== document.contentHash;
    let writes: Awaited<ReturnType<DocumentWork['chunkWrites']>> | undefined;
    try {
      // Embeds the new text: a provider that fails is a passing failure, tried again later.
      writes = changed ? await this.chunkWrites(document, { ...document, title }, chunks, now, signal) : undefined;
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

  /** The original to read: a page fetched now, a stored file, a stored text. */
  private async original(document: ClaimedDocument, signal: AbortSignal): Promise<Original & { bytes: Buffer }> {
    if (document.source === 'url') {
      const page = await fetchPage(this.options.http, document.url!, { timeoutMs: this.options.fetchTimeoutMs, maxBytes: this.options.maxBytes, signal });
      return { bytes: page.bytes, kind: 'file', contentType: page.contentType, filename: new URL(page.url).pathname, url: document.url! };
    }
    const bytes = await this.options.documents.file(document.id);
    return { bytes, kind: document.source === 'text' ? 'text' : 'file', contentType: document.contentType ?? '', filename: document.filename ?? '' };
  }

  /**
   * The writes that turn the stored chunks into `chunks`, position by position: a chunk whose
   * embedded text (its text under its heading path) is the same stays (its metadata follows), a
   * changed one is updated in place (an UPDATE in its history), extra ones are added or deleted.
   * Only new embedded text is embedded, before the transaction.
   */
  private async chunkWrites(claimed: ClaimedDocument, document: DocumentRecord, chunks: readonly DocumentChunk[], now: Date, signal: AbortSignal) {
    const { documents, memory, bulkDeletes, memoryService, embedder } = this.options;
    const stored = await documents.chunks(document.tenantId, document.id);
    const storedAt = new Map(stored.map((chunk) => [chunk.position, chunk]));
    const textOf = (content: string, metadata: Record<string, unknown>) => embeddedText({ content, documentId: document.id, metadata });
    const rewritten = chunks.flatMap((chunk) => {
      const text = textOf(chunk.text, chunkMetadata(document, chunk));
      const old = storedAt.get(chunk.position);
      return old && textOf(old.content, old.metadata) === text ? [] : [{ position: chunk.position, text }];
    });
    const embeddings = rewritten.length === 0 ? [] : await embedder.embed(rewritten.map((chunk) => chunk.text), signal);
    const vectors = new Map(rewritten.map((chunk, index) => [chunk.position, embeddings[index]!]));
    const positions = new Set(chunks.map((chunk) => chunk.position));
    const removed = stored.filter((chunk) => !positions.has(chunk.position)).map((chunk) => chunk.id);
    const indexed: Pick<NewMemoryItem, 'id' | 'tenantId' | 'agentId' | 'memoryType' | 'userId' | 'embedding'>[] = [];
    let addedRows = 0;
    return {
      apply: async () => {
        const added: NewMemoryItem[] = [];
        for (const chunk of chunks) {
          signal.throwIfAborted();
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
        await memory.insert(added, DOCUMENT_CHANGE, signal);
        addedRows = added.length;
        await bulkDeletes.deleteItems(document.tenantId, removed, DOCUMENT_CHANGE, now);
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
