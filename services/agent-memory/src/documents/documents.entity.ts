import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * A document of an agent (decisions §17): its chunks are memory items carrying its id. The
 * repository reads and writes it with SQL; the entity states the columns (the schema test holds
 * the migrations to it).
 */
export const MemoryDocumentSchema = defineEntity({
  name: 'MemoryDocument',
  tableName: 'memory_documents',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    title: p.text().strictNullable(),
    chunks: p.integer(),
    createdAt: p.datetime(),
    source: p.enum(['text', 'upload', 'url'] as const),
    status: p.enum(['processing', 'ready', 'failed'] as const),
    error: p.text().strictNullable(),
    contentType: p.text().strictNullable(),
    filename: p.text().strictNullable(),
    bytes: p.bigint('number'),
    pages: p.integer().strictNullable(),
    url: p.text().strictNullable(),
    refreshSeconds: p.integer().strictNullable(),
    refreshedAt: p.datetime().strictNullable(),
    metadata: p.json<Record<string, unknown>>().columnType('jsonb'),
    userId: p.string().strictNullable(),
    /** Of the chunks last stored: a refresh whose text is the same changes nothing. */
    contentHash: p.text().strictNullable(),
    /** When work is due (first parse, a refresh asked for, a page's next fetch); null: none. */
    dueAt: p.datetime().strictNullable(),
    leasedBy: p.text().strictNullable(),
    leasedUntil: p.datetime().strictNullable(),
    attempts: p.integer(),
  },
});

export class MemoryDocument extends MemoryDocumentSchema.class {}
MemoryDocumentSchema.setClass(MemoryDocument);

/** The original of a document: the uploaded file, the page as last fetched, or the text. */
export const DocumentFileSchema = defineEntity({
  name: 'DocumentFile',
  tableName: 'document_files',
  properties: {
    documentId: p.string().primary(),
    tenantId: p.string(),
    content: p.type('blob').lazy(),
  },
});

export class DocumentFile extends DocumentFileSchema.class {}
DocumentFileSchema.setClass(DocumentFile);
