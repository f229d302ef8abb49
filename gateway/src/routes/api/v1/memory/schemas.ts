import type { MemoryHistoryEntry, MemoryItem } from '@agent-platform/proto/agents/v1/memory';
import { z } from 'zod';
import { EndUserId, iso, isoOrNull, pathId, Paging, TenantQuery, Timestamp } from '../../../../http/schemas.js';

// As for agents, the gateway checks shapes and types; the agent-memory service decides the rest
// (content lengths, memory_type among the agent's memory_types, metadata size) and names the field.

export const AgentId = z.string().min(1).describe('The agent whose memory this is.');

/** decisions §6: the memory an agent can keep; the agent-memory service checks which its agent does. */
export const MEMORY_TYPES = ['semantic', 'episodic', 'procedural'] as const;

/** As requests name it; described where it is used. */
export const MemoryTypeInput = z.enum(MEMORY_TYPES);

/** As answers show it: a component of its own, so clients (the console) read the catalogue from the document. */
export const MemoryType = z.enum(MEMORY_TYPES).describe('semantic, episodic or procedural.').meta({ id: 'MemoryType' });

export const Metadata = z.record(z.string(), z.unknown()).describe('A free-form JSON object (up to 16 KiB), kept with the item.');

export const MemoryParams = z.object({ memory_id: pathId('memory item', 'mem') });

export const AddMemoryBody = z.object({
  agent_id: AgentId,
  memory_type: MemoryType,
  content: z.string().describe('1..32,000 characters, not blank.'),
  metadata: Metadata.optional(),
  user_id: EndUserId.optional().describe('The end user it belongs to: only their turns and searches see it. Absent: shared by every end user.'),
}).meta({
  examples: [{ agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', memory_type: 'semantic', content: 'The customer prefers e-mail over phone calls.', metadata: { source: 'crm' }, user_id: 'customer-8812' }],
});

export const UpdateMemoryBody = z
  .object({
    content: z.string().optional().describe('The new text, 1..32,000 characters, not blank: re-embedded.'),
    metadata: Metadata.optional().describe('Replaces the metadata whole.'),
  })
  .meta({ examples: [{ content: 'The customer prefers e-mail, never phone calls.' }] });

export const SearchMemoryBody = z.object({
  agent_id: AgentId,
  query: z.string().describe('What to look for: 1..32,000 characters, not blank.'),
  memory_type: MemoryTypeInput.optional().describe("Search only this type; absent: every type the agent keeps."),
  // Bounded here too: gRPC carries an absent top_k as 0, which the service reads as "the default".
  top_k: z.int().min(1).max(100).optional().describe('How many results at most, 1..100. Default 5.'),
  min_score: z.number().min(0).max(1).optional().describe('Drop results scoring below this, 0..1.'),
  filter: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .optional()
    .describe('Metadata equality: every key must be present in an item\'s metadata with exactly this value.'),
  user_id: EndUserId.optional().describe("Search as this end user's turn would: their items and the shared ones. Absent: every item."),
}).meta({ examples: [{ agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', query: 'How does the customer like to be contacted?', top_k: 5, min_score: 0.2, filter: { source: 'crm' } }] });

export const MemoryListQuery = TenantQuery.extend({
  agent_id: AgentId,
  memory_type: MemoryTypeInput.optional().describe('Only this type; absent: every type.'),
  user_id: EndUserId.optional().describe("Only this end user's items."),
  session_id: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('Only the items a turn of this chat session added or changed: what the conversation taught the agent (memory extraction, decisions §14).'),
  ...Paging.shape,
});

export const BulkDeleteQuery = TenantQuery.extend({
  agent_id: AgentId,
  user_id: EndUserId.optional().describe("Only this end user's items (never the shared ones)."),
  memory_type: MemoryTypeInput.optional().describe('Only this type.'),
});

export const BulkDeleteResponse = z
  .object({ deleted: z.int().describe('Items deleted; each has a DELETE in its history.') })
  .meta({ id: 'MemoryBulkDelete', description: 'What a bulk delete removed.' });

export const ConsolidateBody = z
  .object({
    keep_messages: z
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe("The newest messages of each session to leave alone. Default 0: everything not yet consolidated, the newest included."),
  })
  // A bare POST consolidates too (Fastify reads no body as null).
  .nullish()
  .meta({ examples: [{ keep_messages: 20 }] });

export const MemoryItemSchema = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    memory_type: MemoryType,
    content: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    user_id: z.string().nullable().describe('The end user it belongs to; null: shared.'),
    created_at: Timestamp,
    updated_at: Timestamp.nullable().describe('When its content or metadata last changed; null: never.'),
  })
  .meta({ id: 'MemoryItem', description: "One item of an agent's memory." });

export const HistoryEntrySchema = z
  .object({
    event: z.enum(['ADD', 'UPDATE', 'DELETE']),
    old_content: z.string().nullable().describe('null for ADD.'),
    new_content: z.string().nullable().describe('null for DELETE.'),
    source: z.enum(['api', 'extraction', 'consolidation', 'document']).describe('What made the change.'),
    session_id: z.string().nullable().describe('The chat session, for extraction and consolidation.'),
    created_at: Timestamp,
  })
  .meta({ id: 'MemoryHistoryEntry', description: 'One change of a memory item.' });

export const HistoryResponse = z
  .object({ memory_id: z.string(), history: z.array(HistoryEntrySchema).describe('Oldest first.') })
  .meta({ id: 'MemoryHistory', description: "A memory item's changes, kept after it is deleted." });

export const SearchResultSchema = z
  .object({
    id: z.string(),
    content: z.string(),
    score: z.number().describe('Relevance in [0, 1]; results come best first.'),
    metadata: z.record(z.string(), z.unknown()),
    memory_type: MemoryType,
    user_id: z.string().nullable().describe('The end user it belongs to; null: shared.'),
    created_at: Timestamp,
  })
  .meta({ id: 'MemorySearchResult', description: 'A memory item found by a search, with its score.' });

export const SearchResponse = z.object({ results: z.array(SearchResultSchema) });

export const ConsolidationSchema = z
  .object({
    agent_id: z.string(),
    items_in: z.int().describe('Episodic messages summarised.'),
    items_out: z.int().describe('Semantic memory items written.'),
  })
  .meta({ id: 'MemoryConsolidation', description: 'What a consolidation did.' });

export function metadataOf(json: string): Record<string, unknown> {
  const value: unknown = json === '' ? {} : JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('agent-memory answered with metadata that is not a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** The REST memory item of a gRPC answer; its absence is an upstream defect (500). */
export function memoryItemBody(item: MemoryItem | undefined): z.output<typeof MemoryItemSchema> {
  if (!item) throw new Error('agent-memory answered without the memory item.');
  return {
    id: item.id,
    agent_id: item.agentId,
    // Another value would be agent-memory's defect: a 500, not an answer outside the catalogue.
    memory_type: MemoryType.parse(item.memoryType),
    content: item.content,
    metadata: metadataOf(item.metadataJson),
    user_id: item.userId ?? null,
    created_at: iso(item.createdAt),
    updated_at: isoOrNull(item.updatedAt),
  };
}

export function historyBody(memoryId: string, entries: readonly MemoryHistoryEntry[]): z.output<typeof HistoryResponse> {
  return {
    memory_id: memoryId,
    history: entries.map((entry) => ({
      event: entry.event as 'ADD' | 'UPDATE' | 'DELETE',
      old_content: entry.oldContent ?? null,
      new_content: entry.newContent ?? null,
      source: entry.source as 'api' | 'extraction' | 'consolidation' | 'document',
      session_id: entry.sessionId ?? null,
      created_at: iso(entry.createdAt),
    })),
  };
}

export function searchResultBody(result: { item?: MemoryItem | undefined; score: number }): z.output<typeof SearchResultSchema> {
  const { id, content, metadata, memory_type, user_id, created_at } = memoryItemBody(result.item);
  return { id, content, score: result.score, metadata, memory_type, user_id, created_at };
}

/** JSON text for gRPC's *_json fields; absent stays absent. */
export function jsonText(value: Record<string, unknown> | undefined): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}
