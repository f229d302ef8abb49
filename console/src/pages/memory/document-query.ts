import type { AgentPlatformClient } from '@agent-platform/client';
import { call } from '../../api/call.js';
import { LIVE_INTERVAL_MS } from '../../api/live.js';
import { useTenantQuery } from '../../api/session-context.js';
import { isProcessing } from './document-facts.js';

/**
 * The reads of documents (decisions §17). They sit under the `memory` area, as a document's
 * chunks are memory items: a change to either refreshes both. Whatever is still processing is
 * read again every LIVE_INTERVAL_MS, and no longer once nothing shown is.
 */

export const DOCUMENTS_PER_PAGE = 20;
/** Chunks run to 1,000 characters each: a page of them is a few screens. */
export const CHUNKS_PER_PAGE = 20;
/** The API's largest page, for finding a chunk among a document's (`chunkPosition`). */
const CHUNKS_PER_READ = 100;

export function useDocuments(agentId: string, page: number) {
  return useTenantQuery(
    ['memory', 'documents', agentId, page],
    (client) => call(client.GET('/api/v1/memory/documents', { params: { query: { agent_id: agentId, page, per_page: DOCUMENTS_PER_PAGE } } })),
    { refetchInterval: (query) => (query.state.data?.items.some(isProcessing) ? LIVE_INTERVAL_MS : false) },
  );
}

export function useDocument(documentId: string) {
  return useTenantQuery(
    ['memory', 'document', documentId],
    (client) => call(client.GET('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: documentId } } })),
    { refetchInterval: (query) => (query.state.data && isProcessing(query.state.data) ? LIVE_INTERVAL_MS : false) },
  );
}

/**
 * A page of the document's chunks as of its last parse (`version`: its refreshed_at), so a
 * refresh that changed them is read again once it is done.
 */
export function useChunks(documentId: string, version: string | null, page: number, enabled: boolean) {
  return useTenantQuery(
    ['memory', 'document', documentId, 'chunks', version, page],
    (client) => call(client.GET('/api/v1/memory/documents/{document_id}/chunks', { params: { path: { document_id: documentId }, query: { page, per_page: CHUNKS_PER_PAGE } } })),
    { enabled },
  );
}

/**
 * Where a cited chunk is in its document (a citation names the chunk, not its place): its
 * position, or null when the document no longer has it (a refresh changed that passage).
 */
export function useChunkPosition(documentId: string, version: string | null, chunkId: string | undefined) {
  return useTenantQuery(['memory', 'document', documentId, 'position', version, chunkId], (client) => chunkPosition(client, documentId, chunkId ?? ''), { enabled: chunkId !== undefined });
}

async function chunkPosition(client: AgentPlatformClient, documentId: string, chunkId: string): Promise<number | null> {
  for (let page = 1; ; page += 1) {
    const list = await call(client.GET('/api/v1/memory/documents/{document_id}/chunks', { params: { path: { document_id: documentId }, query: { page, per_page: CHUNKS_PER_READ } } }));
    const found = list.items.find((chunk) => chunk.id === chunkId);
    if (found) return found.position;
    if (page * CHUNKS_PER_READ >= list.total || list.items.length === 0) return null;
  }
}
