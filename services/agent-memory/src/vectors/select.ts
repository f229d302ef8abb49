import type { Logger } from '@agent-platform/kit';
import type { AgentMemoryConfig } from '../config.js';
import type { Embedder } from '../models/embedder.js';
import { FollowingVectorStore } from './following-vector-store.js';
import { QdrantVectorStore } from './qdrant-vector-store.js';
import { ThreadedVectorStore } from './threaded-vector-store.js';
import type { VectorStore } from './vector-store.js';

/**
 * decisions §6: Qdrant when QDRANT_URL is set, which every replica shares; else the embedded index
 * (persisted when a directory is given), on a thread of its own, following the database so that
 * replicas agree (§18.6).
 */
export function vectorStoreFrom(config: AgentMemoryConfig, embedder: Embedder, logger: Logger): VectorStore {
  if (config.qdrant) {
    return new QdrantVectorStore({
      url: config.qdrant.url,
      ...(config.qdrant.apiKey === undefined ? {} : { apiKey: config.qdrant.apiKey }),
      model: embedder.model,
      dimensions: embedder.dimensions,
    });
  }
  return new FollowingVectorStore(new ThreadedVectorStore({ directory: config.vectorIndexDir, dimensions: embedder.dimensions, model: embedder.model, logger }), { logger });
}
