import { defineEntity, p } from '@mikro-orm/postgresql';
import { MEMORY_TYPES } from '../agents/agents.entity.js';

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
    memoryType: p.enum(MEMORY_TYPES),
    content: p.text(),
    metadata: p.json<Record<string, unknown>>().columnType('jsonb'),
    embedding: p.type('blob').lazy(),
    embeddingModel: p.text(),
    createdAt: p.datetime(),
    /** to_tsvector('simple', content), kept by PostgreSQL for the full-text half of search. */
    searchVector: p.type('tsvector').generated("(to_tsvector('simple', \"content\")) stored").lazy().nullable(),
  },
});

export class MemoryItem extends MemoryItemSchema.class {}
MemoryItemSchema.setClass(MemoryItem);

export const DocumentSchema = defineEntity({
  name: 'MemoryDocument',
  tableName: 'memory_documents',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    title: p.text().strictNullable(),
    chunks: p.integer(),
    createdAt: p.datetime(),
  },
});

export class MemoryDocument extends DocumentSchema.class {}
DocumentSchema.setClass(MemoryDocument);
