import type { EntityManager } from '@agent-platform/kit/db';
import { headingOf } from '../memory/embedded-text.js';
import { metadataOf } from '../memory/memory-items.js';

export type DocumentSource = 'text' | 'upload' | 'url';
export type DocumentStatus = 'processing' | 'ready' | 'failed';

/** A document as every answer shows it (decisions §17). */
export interface DocumentRecord {
  id: string;
  tenantId: string;
  agentId: string;
  title: string | null;
  source: DocumentSource;
  status: DocumentStatus;
  error: string | null;
  contentType: string | null;
  filename: string | null;
  bytes: number;
  pages: number | null;
  url: string | null;
  refreshSeconds: number | null;
  refreshedAt: Date | null;
  metadata: Record<string, unknown>;
  userId: string | null;
  chunks: number;
  createdAt: Date;
}

/** A document leased to this replica for its due work. */
export interface ClaimedDocument extends DocumentRecord {
  /** Counting this claim; the lease's token, with the replica's name. */
  attempt: number;
  /** Of the chunks stored from the content last parsed: unchanged content is not chunked again. */
  contentHash: string | null;
}

/** A stored chunk: a semantic memory item of the document. */
export interface StoredChunk {
  id: string;
  position: number;
  content: string;
  page: number | null;
  heading: string[];
  /** Its item's metadata, which the page and heading are read from. */
  metadata: Record<string, unknown>;
}

interface DocumentRow {
  id: string;
  tenant_id: string;
  agent_id: string;
  title: string | null;
  source: DocumentSource;
  status: DocumentStatus;
  error: string | null;
  content_type: string | null;
  filename: string | null;
  bytes: string | number;
  pages: number | null;
  url: string | null;
  refresh_seconds: number | null;
  refreshed_at: Date | null;
  metadata: Record<string, unknown> | string;
  user_id: string | null;
  chunks: number;
  created_at: Date;
}

const COLUMNS = `"id", "tenant_id", "agent_id", "title", "source", "status", "error", "content_type", "filename", "bytes", "pages",
  "url", "refresh_seconds", "refreshed_at", "metadata", "user_id", "chunks", "created_at"`;

function recordOf(row: DocumentRow): DocumentRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    agentId: row.agent_id,
    title: row.title,
    source: row.source,
    status: row.status,
    error: row.error,
    contentType: row.content_type,
    filename: row.filename,
    bytes: Number(row.bytes),
    pages: row.pages,
    url: row.url,
    refreshSeconds: row.refresh_seconds,
    refreshedAt: row.refreshed_at && new Date(row.refreshed_at),
    metadata: metadataOf(row.metadata),
    userId: row.user_id,
    chunks: row.chunks,
    createdAt: new Date(row.created_at),
  };
}

/** What a finished piece of work writes onto its document. */
export interface DocumentOutcome {
  status: DocumentStatus;
  error: string | null;
  /** Whether the tries are counted from nought again (the work is done, or given up). */
  resetAttempts: boolean;
  /** Undefined: as it was. */
  title?: string | null;
  chunks?: number;
  pages?: number | null;
  contentType?: string;
  bytes?: number;
  contentHash?: string;
  /** The content was parsed now (a page: fetched and compared). */
  refreshed: boolean;
  /** When the document is due again; null: not at all. */
  dueAt: Date | null;
}

/**
 * Documents, their originals and their chunks' positions. Every statement a caller's request
 * makes is scoped by tenant; the workers' claims are not, and carry the tenant onward.
 */
export class DocumentsRepository {
  private readonly em: EntityManager;
  private readonly replica: string;

  constructor(em: EntityManager, replica: string) {
    this.em = em;
    this.replica = replica;
  }

  /**
   * In the caller's transaction: the document and its original; `dueAt` set: work for the workers
   * from then. Two statements: outside a transaction a worker could claim the document before its
   * original was written (a 20 MiB one takes long enough) and read an empty file.
   */
  async insert(document: DocumentRecord, original: Buffer, work: { dueAt: Date | null; contentHash: string | null }): Promise<void> {
    await this.em.execute(
      `insert into "memory_documents" ("id", "tenant_id", "agent_id", "title", "source", "status", "error", "content_type", "filename", "bytes", "pages",
         "url", "refresh_seconds", "refreshed_at", "metadata", "user_id", "chunks", "created_at", "due_at", "content_hash")
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?)`,
      [
        document.id,
        document.tenantId,
        document.agentId,
        document.title,
        document.source,
        document.status,
        document.error,
        document.contentType,
        document.filename,
        document.bytes,
        document.pages,
        document.url,
        document.refreshSeconds,
        document.refreshedAt,
        JSON.stringify(document.metadata),
        document.userId,
        document.chunks,
        document.createdAt,
        work.dueAt,
        work.contentHash,
      ],
      'run',
    );
    await this.em.execute(`insert into "document_files" ("document_id", "tenant_id", "content") values (?, ?, ?)`, [document.id, document.tenantId, original], 'run');
  }

  async find(tenantId: string, id: string): Promise<DocumentRecord | undefined> {
    const rows = await this.em.execute<DocumentRow[]>(`select ${COLUMNS} from "memory_documents" where "id" = ? and "tenant_id" = ?`, [id, tenantId], 'all');
    return rows[0] && recordOf(rows[0]);
  }

  /** Newest first. */
  async list(tenantId: string, agentId: string, limit: number, offset: number): Promise<{ documents: DocumentRecord[]; total: number }> {
    const [rows, counted] = await Promise.all([
      this.em.execute<DocumentRow[]>(
        `select ${COLUMNS} from "memory_documents" where "tenant_id" = ? and "agent_id" = ? order by "created_at" desc, "id" desc limit ? offset ?`,
        [tenantId, agentId, limit, offset],
        'all',
      ),
      this.em.execute<{ count: string }[]>(`select count(*) as "count" from "memory_documents" where "tenant_id" = ? and "agent_id" = ?`, [tenantId, agentId], 'all'),
    ]);
    return { documents: rows.map(recordOf), total: Number(counted[0]?.count ?? 0) };
  }

  /** In document order; `limit` undefined: all of them. */
  async chunks(tenantId: string, documentId: string, limit?: number, offset = 0): Promise<StoredChunk[]> {
    const rows = await this.em.execute<{ id: string; content: string; metadata: Record<string, unknown> | string }[]>(
      `select "id", "content", "metadata" from "memory_items" where "document_id" = ? and "tenant_id" = ?
        order by ("metadata"->>'chunk_index')::int, "id" ${limit === undefined ? '' : 'limit ? offset ?'}`,
      limit === undefined ? [documentId, tenantId] : [documentId, tenantId, limit, offset],
      'all',
    );
    return rows.map((row) => {
      const metadata = metadataOf(row.metadata);
      return {
        id: row.id,
        content: row.content,
        position: Number(metadata['chunk_index'] ?? 0),
        page: typeof metadata['page'] === 'number' ? metadata['page'] : null,
        heading: headingOf(metadata),
        metadata,
      };
    });
  }

  /** The original's size, or undefined when the document is not the tenant's. */
  async fileSize(tenantId: string, documentId: string): Promise<number | undefined> {
    const rows = await this.em.execute<{ size: number }[]>(
      `select octet_length("content") as "size" from "document_files" where "document_id" = ? and "tenant_id" = ?`,
      [documentId, tenantId],
      'all',
    );
    return rows[0]?.size;
  }

  /** `length` bytes of the original from `offset` (0-based); a range read, never the whole value. */
  async fileRange(tenantId: string, documentId: string, offset: number, length: number): Promise<Buffer> {
    const rows = await this.em.execute<{ part: Buffer }[]>(
      `select substring("content" from ? for ?) as "part" from "document_files" where "document_id" = ? and "tenant_id" = ?`,
      [offset + 1, length, documentId, tenantId],
      'all',
    );
    return rows[0]?.part ?? Buffer.alloc(0);
  }

  /** For a worker that leased the document: the whole original. */
  async file(documentId: string): Promise<Buffer> {
    const rows = await this.em.execute<{ content: Buffer }[]>(`select "content" from "document_files" where "document_id" = ?`, [documentId], 'all');
    return rows[0]?.content ?? Buffer.alloc(0);
  }

  /** In the caller's transaction: the original a page was fetched as this time. */
  async replaceFile(documentId: string, original: Buffer): Promise<void> {
    await this.em.execute(`update "document_files" set "content" = ? where "document_id" = ?`, [original, documentId], 'run');
  }

  /**
   * Makes the document due now, `processing` (its chunks answer searches meanwhile). False when
   * it is not the tenant's.
   */
  async requestRefresh(tenantId: string, id: string, now: Date): Promise<DocumentRecord | undefined> {
    const rows = await this.em.execute<DocumentRow[]>(
      `update "memory_documents" set "status" = 'processing', "due_at" = ?, "attempts" = 0 where "id" = ? and "tenant_id" = ? returning ${COLUMNS}`,
      [now, id, tenantId],
      'all',
    );
    return rows[0] && recordOf(rows[0]);
  }

  /** Up to `limit` due documents, longest due first, leased for `leaseMs`; each claim counts as an attempt. */
  async claim(limit: number, leaseMs: number): Promise<ClaimedDocument[]> {
    const rows = await this.em.fork().execute<(DocumentRow & { attempts: number; content_hash: string | null })[]>(
      `update "memory_documents" set "leased_by" = ?, "leased_until" = now() + make_interval(secs => ?), "attempts" = "attempts" + 1
        where "id" in (
          select "id" from "memory_documents"
           where "due_at" <= now() and ("leased_until" is null or "leased_until" < now())
           order by "due_at" limit ? for update skip locked)
        returning ${COLUMNS}, "attempts", "content_hash"`,
      [this.replica, leaseMs / 1000, limit],
      'all',
    );
    return rows.map((row) => ({ ...recordOf(row), attempt: row.attempts, contentHash: row.content_hash }));
  }

  /** Extends the lease of a document this replica works on; false when it no longer holds it. */
  async renew(document: ClaimedDocument, leaseMs: number): Promise<boolean> {
    const rows = await this.em
      .fork()
      .execute<{ id: string }[]>(
        `update "memory_documents" set "leased_until" = now() + make_interval(secs => ?) where "id" = ? and "leased_by" = ? and "attempts" = ? returning "id"`,
        [leaseMs / 1000, document.id, this.replica, document.attempt],
        'all',
      );
    return rows.length > 0;
  }

  /** Hands a document back unprocessed: due again at once, the claim not counted. */
  async release(document: ClaimedDocument): Promise<void> {
    await this.em
      .fork()
      .execute(
        `update "memory_documents" set "leased_by" = null, "leased_until" = null, "attempts" = "attempts" - 1 where "id" = ? and "leased_by" = ? and "attempts" = ?`,
        [document.id, this.replica, document.attempt],
        'run',
      );
  }

  /**
   * In the transaction of the work's other writes: records its outcome and ends the lease, if this
   * replica still holds it. Undefined when it does not (the lease ran out and another replica took
   * the document, or it was deleted): the caller then rolls back.
   */
  async finish(document: ClaimedDocument, outcome: DocumentOutcome, now: Date): Promise<DocumentRecord | undefined> {
    const rows = await this.em.execute<DocumentRow[]>(
      `update "memory_documents" set "status" = ?, "error" = ?, "due_at" = ?, "leased_by" = null, "leased_until" = null,
          "attempts" = case when ? then 0 else "attempts" end,
          "title" = case when ? then ? else "title" end,
          "chunks" = coalesce(?, "chunks"), "pages" = case when ? then ? else "pages" end,
          "content_type" = coalesce(?, "content_type"), "bytes" = coalesce(?, "bytes"), "content_hash" = coalesce(?, "content_hash"),
          "refreshed_at" = case when ? then ? else "refreshed_at" end
        where "id" = ? and "leased_by" = ? and "attempts" = ? returning ${COLUMNS}`,
      [
        outcome.status,
        outcome.error,
        outcome.dueAt,
        outcome.resetAttempts,
        outcome.title !== undefined,
        outcome.title ?? null,
        outcome.chunks ?? null,
        outcome.pages !== undefined,
        outcome.pages ?? null,
        outcome.contentType ?? null,
        outcome.bytes ?? null,
        outcome.contentHash ?? null,
        outcome.refreshed,
        now,
        document.id,
        this.replica,
        document.attempt,
      ],
      'all',
    );
    return rows[0] && recordOf(rows[0]);
  }
}
