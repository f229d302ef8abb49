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
 * Originals up to this size are read on threads kept warm: starting a thread (its parsers
 * loaded) took 340–500 ms, three times the reading of a 100-page PDF. Larger ones are read on a
 * thread that stops a second after: a 20 MiB text's thread kept ~230 MB of heap, which the
 * embedding and indexing that follow need.
 */
const WARM_MAX_BYTES = 2 * 1_048_576;
const COLD_THREAD_IDLE_MS = 1_000;
/**
 * A warm thread beyond the first stays this long without work. piscina's default, 0, stopped it
 * after each document: 1,000 small uploads, two at a time, started a thread for every other one.
 */
const WARM_THREAD_IDLE_MS = 60_000;
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
  /** One thread always started, more while documents come in at once. */
  private readonly warm: Piscina<Original, ReadOutcome>;
  private readonly cold: Piscina<Original, ReadOutcome>;
  private started = 0;

  constructor(private readonly options: DocumentReaderOptions) {
    this.warm = this.pool({ minThreads: 1, maxThreads: options.threads, idleTimeout: WARM_THREAD_IDLE_MS });
    this.cold = this.pool({ minThreads: 0, maxThreads: options.threads, idleTimeout: COLD_THREAD_IDLE_MS });
  }

  /** The original's chunks; DomainError('unsupported_document') for one that cannot be read. */
  async read(original: Original, signal: AbortSignal): Promise<ReadDocument> {
    let outcome: ReadOutcome;
    try {
      outcome = await (original.bytes.byteLength <= WARM_MAX_BYTES ? this.warm : this.cold).run(original, { signal });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw unsupportedDocument(`Reading the document takes more than ${this.options.memoryMb} MiB of memory; split it into smaller files.`, error);
      }
      throw error;
    }
    if ('unsupported' in outcome) throw unsupportedDocument(outcome.unsupported);
    return outcome.read;
  }

  /** Threads started so far, the first warm one among them: each start costs its parsers' loading. */
  get threadsStarted(): number {
    return this.started;
  }

  /** Stops the threads; a read in progress is abandoned (its document's lease brings it back). */
  async close(): Promise<void> {
    await Promise.all([this.warm.destroy(), this.cold.destroy()]);
  }

  private pool(threads: { minThreads: number; maxThreads: number; idleTimeout: number }): Piscina<Original, ReadOutcome> {
    const entry = threadEntry('reading-thread', import.meta.url);
    const pool = new Piscina<Original, ReadOutcome>({
      filename: entry.url.href,
      ...(entry.execArgv === undefined ? {} : { execArgv: entry.execArgv }),
      ...threads,
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb, maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    // A thread that fails with no read of its own to fail (it could not start, say): the read
    // that was waiting for it fails on its own and its document is tried again.
    pool.on('error', (error: unknown) => this.options.logger.error({ err: error }, 'a document reading thread failed'));
    pool.on('workerCreate', () => (this.started += 1));
    return pool;
  }
}
