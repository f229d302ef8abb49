import type { Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { OutboundHttp, OutboundPolicy } from '@agent-platform/kit/security';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { AgentMemoryConfig } from '../config.js';
import type { MemoryBulkDeleteRepository } from '../memory/memory-bulk-delete.repository.js';
import type { MemoryRepository } from '../memory/memory.repository.js';
import type { MemoryService } from '../memory/memory.service.js';
import type { Embedder } from '../models/embedder.js';
import { DocumentReader } from './document-reader.js';
import { DocumentWork } from './document-work.js';
import { DocumentsRepository, type ClaimedDocument } from './documents.repository.js';
import { DocumentsService } from './documents.service.js';

const DOCUMENT_POLL_INTERVAL_MS = 2_000;

/**
 * Documents wired for the composition root: the service the RPCs call, this replica's workers,
 * which it wakes when a document is due now and which poll for what other replicas queued, and
 * the threads they read originals on (closed after the workers stop).
 */
export function assembleDocuments(deps: {
  em: EntityManager;
  /** This replica, as its leases name it. */
  replica: string;
  agents: AgentsRepository;
  memory: MemoryRepository;
  bulkDeletes: MemoryBulkDeleteRepository;
  memoryService: MemoryService;
  embedder: Embedder;
  policy: OutboundPolicy;
  http: OutboundHttp;
  config: Pick<AgentMemoryConfig, 'documentMaxBytes' | 'documentFetchTimeoutMs' | 'documentLeaseMs' | 'documentConcurrency' | 'documentReadMemoryMb'>;
  /** Runs a worker's job in a database context of its own. */
  inContext: <T>(run: () => Promise<T>) => Promise<T>;
  logger: Logger;
}): { documents: DocumentsService; workers: LeasedWorkLoop<ClaimedDocument>; reader: DocumentReader } {
  const { em, config, logger } = deps;
  const repository = new DocumentsRepository(em, deps.replica);
  const reader = new DocumentReader({ threads: config.documentConcurrency, memoryMb: config.documentReadMemoryMb, logger });
  const work = new DocumentWork({
    em,
    documents: repository,
    memory: deps.memory,
    bulkDeletes: deps.bulkDeletes,
    memoryService: deps.memoryService,
    embedder: deps.embedder,
    reader,
    http: deps.http,
    maxBytes: config.documentMaxBytes,
    fetchTimeoutMs: config.documentFetchTimeoutMs,
    leaseMs: config.documentLeaseMs,
    logger: logger.child({ component: 'document-work' }),
  });
  const workers = new LeasedWorkLoop<ClaimedDocument>({
    name: 'documents',
    claim: (limit) => repository.claim(limit, config.documentLeaseMs),
    process: (document, signal) => deps.inContext(() => work.process(document, signal)),
    release: (document) => work.release(document),
    concurrency: config.documentConcurrency,
    pollIntervalMs: DOCUMENT_POLL_INTERVAL_MS,
    logger,
  });
  const documents = new DocumentsService({
    em,
    agents: deps.agents,
    documents: repository,
    bulkDeletes: deps.bulkDeletes,
    memoryService: deps.memoryService,
    policy: deps.policy,
    maxBytes: config.documentMaxBytes,
    wake: () => workers.wake(),
  });
  return { documents, workers, reader };
}
