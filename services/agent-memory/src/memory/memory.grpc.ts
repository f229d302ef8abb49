import { parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { MemoryItem as MemoryItemMessage, MemoryServiceService, SearchResult } from '@agent-platform/proto/agents/v1/memory';
import type { Ranked } from './hybrid-ranking.js';
import type { ConsolidationService } from './consolidation.service.js';
import type { MemoryItemView } from './memory-items.js';
import type { MemoryService } from './memory.service.js';

export const MEMORY_SERVICE_NAME = 'agentplatform.agents.v1.MemoryService';

/** MemoryService: translation only; MemoryService and ConsolidationService decide. */
export function memoryHandlers(memory: MemoryService, consolidation: ConsolidationService): Handlers<typeof MemoryServiceService> {
  return {
    addMemory: async (request, ctx) => {
      const item = await memory.add(actorOf(ctx), {
        agentId: request.agentId,
        memoryType: request.memoryType,
        content: request.content,
        metadataJson: present(request.metadataJson),
        userId: present(request.userId),
      });
      return { item: toMemoryItemMessage(item) };
    },

    updateMemory: async (request, ctx) => {
      // Empty content is content to check (blank: 422), never "no change": proto3 optional keeps it apart from absent.
      const item = await memory.update(actorOf(ctx), { memoryId: request.memoryId, content: request.content, metadataJson: present(request.metadataJson) });
      return { item: toMemoryItemMessage(item) };
    },

    searchMemory: async (request, ctx) => {
      const results = await memory.search(actorOf(ctx), {
        agentId: request.agentId,
        query: request.query,
        memoryType: present(request.memoryType),
        topK: request.topK,
        minScore: request.minScore,
        filterJson: present(request.filterJson),
        userId: present(request.userId),
      });
      return { results: results.map(toSearchResult) };
    },

    listMemory: async (request, ctx) => {
      const selection = { memoryType: present(request.memoryType), userId: present(request.userId), sessionId: present(request.sessionId) };
      const { items, total } = await memory.list(actorOf(ctx), request.agentId, selection, parsePage(request.page));
      return { items: items.map(toMemoryItemMessage), total };
    },

    deleteMemory: async (request, ctx) => {
      await memory.delete(actorOf(ctx), request.memoryId);
      return {};
    },

    deleteMemoryItems: async (request, ctx) => {
      const deleted = await memory.deleteMatching(actorOf(ctx), request.agentId, { memoryType: present(request.memoryType), userId: present(request.userId) });
      return { deleted };
    },

    getMemoryHistory: async (request, ctx) => {
      const entries = await memory.history(actorOf(ctx), request.memoryId);
      return {
        entries: entries.map((entry) => ({
          memoryId: entry.memoryId,
          event: entry.event,
          oldContent: entry.oldContent ?? undefined,
          newContent: entry.newContent ?? undefined,
          source: entry.source,
          sessionId: entry.sessionId ?? undefined,
          createdAt: entry.createdAt,
        })),
      };
    },

    consolidateMemory: async (request, ctx) => {
      const outcome = await consolidation.consolidateAgent(actorOf(ctx), request.agentId, request.keepMessages, ctx.signal);
      return { itemsIn: outcome.itemsIn, itemsOut: outcome.itemsOut };
    },
  };
}

/** A ranked item as searches and chat replies show it. */
export function toSearchResult({ candidate, score }: Ranked<MemoryItemView>): SearchResult {
  return { item: toMemoryItemMessage(candidate), score };
}

export function toMemoryItemMessage(item: MemoryItemView): MemoryItemMessage {
  return {
    id: item.id,
    agentId: item.agentId,
    memoryType: item.memoryType,
    content: item.content,
    metadataJson: JSON.stringify(item.metadata),
    createdAt: item.createdAt,
    userId: item.userId ?? undefined,
    updatedAt: item.updatedAt ?? undefined,
  };
}
