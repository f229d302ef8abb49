import type { Logger } from '@agent-platform/kit';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import type { ClaimedExtraction, ExtractionRepository } from './extraction.repository.js';

export interface ExtractionWorkerOptions {
  queue: ExtractionRepository;
  /** ExtractionService.process, in a database context of its own. */
  process: (job: ClaimedExtraction, signal: AbortSignal) => Promise<void>;
  concurrency: number;
  /** Outlives a job's two model calls and its writes: a lease that runs out lets another replica take the job. */
  leaseMs: number;
  pollIntervalMs: number;
  logger: Logger;
}

/** Works off the extraction queue on kit's LeasedWorkLoop: woken by each queued turn, polling for retries and other replicas' leftovers. */
export class ExtractionWorker {
  private readonly loop: LeasedWorkLoop<ClaimedExtraction>;

  constructor(options: ExtractionWorkerOptions) {
    this.loop = new LeasedWorkLoop({
      name: 'memory-extraction',
      claim: (limit) => options.queue.claim(limit, options.leaseMs),
      process: options.process,
      release: (job) => options.queue.release(job),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A turn was queued: look now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }
}
