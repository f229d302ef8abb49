import { Piscina } from 'piscina';
import { threadEntry } from '../thread-entry.js';
import { unsupportedDocument } from './document.js';
import type { Original, ReadDocument } from './reading.js';

export type ReadOutcome = { read: ReadDocument } | { unsupported: string };

export interface DocumentReaderOptions {
  /** Documents read at once, one per thread: DOCUMENT_CONCURRENCY. */
  threads: number;
  /** The heap a thread may grow to while it reads one document: DOCUMENT_READ_MEMORY_MB. */
  memoryMb: number;
  logger: { error(fields: object, message: string): void };
}

/**
 * A thread no document has needed for this long stops, and gives its memory back: a 20 MiB
 * text's thread kept ~230 MB of heap, which the embedding and indexing that follow need.
 */
const THREAD_IDLE_MS = 1_000;
/**
 * A thread's young generation. Threads share the process's V8 flags, and the service's 64 MB
 * semi-spaces (for request latency, docs/performance.md) would let each take ~200 MB more.
 */
const THREAD_YOUNG_GENERATION_MB = 32;

/**
 * Reads documents' originals into chunks on worker threads (piscina). Parsing a large PDF or
 * chunking a 20 MiB text is seconds of CPU: on the service's own thread it held every search and
 * chat call behind it. A thread's heap is bounded, so one document cannot take the service's
 * memory: a document that needs more fails as too large, and the thread is replaced.
 */
export class DocumentReader {
  private readonly pool: Piscina<Original, ReadOutcome>;

  constructor(private readonly options: DocumentReaderOptions) {
    const entry = threadEntry('reading-thread', import.meta.url);
    this.pool = new Piscina({
      filename: entry.url.href,
      ...(entry.execArgv === undefined ? {} : { execArgv: entry.execArgv }),
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: THREAD_IDLE_MS,
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    // A thread that fails with no read of its own to fail (it could not start, say): the read
    // that was waiting for it fails on its own and its document is tried again.
    this.pool.on('error', (error: unknown) => options.logger.error({ err: error }, 'a document reading thread failed'));
  }

  /** The original's chunks; DomainError('unsupported_document') for one that cannot be read. */
  async read(original: Original, signal: AbortSignal): Promise<ReadDocument> {
    let outcome: ReadOutcome;
    try {
      outcome = await this.pool.run(original, { signal });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw unsupportedDocument(`Reading the document takes more than ${this.options.memoryMb} MiB of memory; split it into smaller files.`, error);
      }
      throw error;
    }
    if ('unsupported' in outcome) throw unsupportedDocument(outcome.unsupported);
    return outcome.read;
  }

  /** Stops the threads; a read in progress is abandoned (its document's lease brings it back). */
  close(): Promise<void> {
    return this.pool.destroy();
  }
}
