import { defineEntity, p } from '@mikro-orm/postgresql';
import { MEMORY_TYPES } from '../agents/agents.entity.js';
import { SEARCH_VECTOR_SQL } from '../migrations/0020-chunk-headings-searched.js';

/**
 * One memory of an agent. Its embedding is kept here too (float32, little-endian), so the vector
 * index, embedded or Qdrant, can always be rebuilt from the database.
 */
export const MemoryItemSchema = defineEntity({
  name: 'MemoryItem',
  tableName: 'memory_items',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    /** Set on the chunks of a document, which go with it. */
    documentId: p.string().strictNullable(),
    /** The end user of the tenant's application it belongs to (decisions §14); null: shared by all. */
    userId: p.string().strictNullable(),
    memoryType: p.enum(MEMORY_TYPES),
    content: p.text(),
    metadata: p.json<Record<string, unknown>>().columnType('jsonb'),
    embedding: p.type('blob').lazy(),
    embeddingModel: p.text(),
    createdAt: p.datetime(),
    /** When its content or metadata last changed (and, with its content, its embedding). */
    updatedAt: p.datetime().strictNullable(),
    /**
     * The transaction that last re-embedded it in place with another model (memory/reembedding.ts),
     * which the vector feed reads as it reads history entries' (re-embedding records no history:
     * the content is unchanged); null when never re-embedded. Never written through the ORM.
     */
    embeddedXact: p.string().columnType('xid8').nullable().lazy(),
    /** The words of the item's embedded text (a chunk's heading path, then its content), kept by PostgreSQL for the full-text half of search. */
    searchVector: p.type('tsvector').generated(`${SEARCH_VECTOR_SQL} stored`).lazy().nullable(),
  },
});

export class MemoryItem extends MemoryItemSchema.class {}
MemoryItemSchema.setClass(MemoryItem);


export const MEMORY_EVENTS = ['ADD', 'UPDATE', 'DELETE'] as const;
export type MemoryHistoryEvent = (typeof MEMORY_EVENTS)[number];
export const MEMORY_SOURCES = ['api', 'extraction', 'consolidation', 'document'] as const;
/** What made a change of memory: a caller of the API, extraction after a turn, consolidation, a document. */
export type MemorySource = (typeof MEMORY_SOURCES)[number];

/** One change of one item, appended and never rewritten; kept after the item is deleted. */
export const MemoryHistorySchema = defineEntity({
  name: 'MemoryHistoryEntry',
  tableName: 'memory_history',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    tenantId: p.string(),
    agentId: p.string(),
    memoryId: p.string(),
    event: p.enum(MEMORY_EVENTS),
    oldContent: p.text().strictNullable(),
    newContent: p.text().strictNullable(),
    source: p.enum(MEMORY_SOURCES),
    /** The turn's session, for extraction and consolidation. */
    sessionId: p.string().strictNullable(),
    createdAt: p.datetime(),
    /** The transaction that wrote it (the column's default), which the vector feed reads; never written here. */
    xact: p.string().columnType('xid8').nullable().lazy(),
  },
});

export class MemoryHistoryEntry extends MemoryHistorySchema.class {}
MemoryHistorySchema.setClass(MemoryHistoryEntry);

export const EXTRACTION_STATUSES = ['pending', 'done', 'failed'] as const;

/**
 * One finished turn to extract memories from (decisions §14), queued in the turn's transaction.
 * `actor` is who chatted: extraction's model calls are charged to them, as the turn's were.
 */
export const MemoryExtractionSchema = defineEntity({
  name: 'MemoryExtraction',
  tableName: 'memory_extractions',
  properties: {
    /** The turn's answer. */
    messageId: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    sessionId: p.string(),
    userId: p.string().strictNullable(),
    /** The run the turn was (decisions §16): the extraction is its last step. Null before runs were kept. */
    runId: p.string().strictNullable(),
    actor: p.json<Record<string, unknown>>().columnType('jsonb'),
    status: p.enum(EXTRACTION_STATUSES),
    attempts: p.integer(),
    dueAt: p.datetime(),
    leasedBy: p.string().strictNullable(),
    leasedUntil: p.datetime().strictNullable(),
    lastError: p.text().strictNullable(),
    added: p.integer().strictNullable(),
    updated: p.integer().strictNullable(),
    deleted: p.integer().strictNullable(),
    credits: p.integer().strictNullable(),
    chargedAt: p.datetime().strictNullable(),
    createdAt: p.datetime(),
    finishedAt: p.datetime().strictNullable(),
  },
});

export class MemoryExtraction extends MemoryExtractionSchema.class {}
MemoryExtractionSchema.setClass(MemoryExtraction);
