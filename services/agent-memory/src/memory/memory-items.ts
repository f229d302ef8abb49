import type { MemoryType } from '../agents/agents.entity.js';
import type { MemoryItem, MemorySource, MemoryHistoryEvent } from './memory.entity.js';

/**
 * Memory items as the repository hands them out and takes them in: what is written, what each
 * answer shows, what search finds and scores, and the rows they are read from.
 */
export interface NewMemoryItem {
  id: string;
  tenantId: string;
  agentId: string;
  documentId: string | null;
  userId: string | null;
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  embedding: Float32Array;
  embeddingModel: string;
  createdAt: Date;
}

/** What every answer about an item shows. */
export interface MemoryItemView {
  id: string;
  agentId: string;
  memoryType: MemoryType;
  content: string;
  metadata: Record<string, unknown>;
  userId: string | null;
  createdAt: Date;
  updatedAt: Date | null;
}

/** An item as search finds it: its vector stays in the index, which scores it. */
export interface FoundItem extends MemoryItemView {
  documentId: string | null;
}

/** An item with its stored vector, for what is scored without the index. */
export interface Candidate extends FoundItem {
  embedding: Float32Array;
}

/**
 * Whose items a turn or search sees (decisions §14): the end user's and the shared ones (no
 * user); `userId: null` sees the shared ones only.
 */
export interface Audience {
  userId: string | null;
}

export interface CandidateScope {
  tenantId: string;
  agentId: string;
  memoryTypes: readonly string[];
  /** Metadata values compared for equality (jsonb containment). */
  filter: Record<string, string | number | boolean> | undefined;
  /** Undefined: every item (an operator's search). */
  audience: Audience | undefined;
  embeddingModel: string;
}

/** Why an item changed, as its history records it. */
export interface ChangeSource {
  source: MemorySource;
  /** The turn's session, for extraction and consolidation. */
  sessionId: string | null;
}

/** One entry of an item's history, oldest first. */
export interface HistoryView {
  memoryId: string;
  event: MemoryHistoryEvent;
  oldContent: string | null;
  newContent: string | null;
  source: MemorySource;
  sessionId: string | null;
  createdAt: Date;
}

/** What a bulk delete matches within one agent; absent fields match everything. */
export interface ItemSelection {
  userId: string | undefined;
  memoryType: string | undefined;
  /** Only the items a turn of this chat session added or changed (its history says so). */
  sessionId?: string | undefined;
}

export interface FoundRow {
  id: string;
  agent_id: string;
  document_id: string | null;
  user_id: string | null;
  memory_type: MemoryType;
  content: string;
  metadata: Record<string, unknown> | string;
  created_at: Date | string;
  updated_at: Date | string | null;
}

export interface CandidateRow extends FoundRow {
  embedding: Buffer;
}

// Floats are stored as the platform writes them: little-endian on every machine Node supports.
export function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function fromBytes(bytes: Buffer): Float32Array {
  // A copy: the pg driver's Buffer may be a view on a shared pool with an unaligned offset.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

export function candidateOf(row: CandidateRow): Candidate {
  return { ...foundOf(row), embedding: fromBytes(row.embedding) };
}

export function foundOf(row: FoundRow): FoundItem {
  return {
    id: row.id,
    agentId: row.agent_id,
    documentId: row.document_id,
    userId: row.user_id,
    memoryType: row.memory_type,
    content: row.content,
    metadata: metadataOf(row.metadata),
    createdAt: new Date(row.created_at),
    updatedAt: row.updated_at === null ? null : new Date(row.updated_at),
  };
}

/** A metadata column as read: an object, or its JSON where the driver leaves jsonb as text. */
export function metadataOf(column: Record<string, unknown> | string): Record<string, unknown> {
  return typeof column === 'string' ? (JSON.parse(column) as Record<string, unknown>) : column;
}

export function viewOf(item: MemoryItemView | MemoryItem): MemoryItemView {
  const { id, agentId, memoryType, content, metadata, userId, createdAt, updatedAt } = item;
  return { id, agentId, memoryType, content, metadata, userId, createdAt, updatedAt };
}

/** The columns read of an item: without its vector (found), with it (a candidate to score). */
const FOUND_COLUMN_NAMES = ['id', 'agent_id', 'document_id', 'user_id', 'memory_type', 'content', 'metadata', 'created_at', 'updated_at'];
const CANDIDATE_COLUMN_NAMES = [...FOUND_COLUMN_NAMES, 'embedding'];
export const FOUND_COLUMNS = FOUND_COLUMN_NAMES.map((name) => `"${name}"`).join(', ');
export const CANDIDATE_COLUMNS = CANDIDATE_COLUMN_NAMES.map((name) => `"${name}"`).join(', ');
/** The same, of the row an update names "item" (beside other tables' columns of the same names). */
export const QUALIFIED_CANDIDATE_COLUMNS = CANDIDATE_COLUMN_NAMES.map((name) => `"item"."${name}"`).join(', ');
