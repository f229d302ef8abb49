interface Waiting<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted while a batch is being written wait and go together in the next
 * one. With nothing in flight an item is written at once (no added latency when idle); under load
 * one statement carries many items, so round trips stop growing with the request rate.
 * `write` answers one output per item, in order; when it rejects, every item of the batch does.
 */
export class Batcher<I, O> {
  private readonly write: (items: readonly I[]) => Promise<readonly O[]>;
  private readonly maxBatch: number;
  private waiting: Waiting<I, O>[] = [];
  private writing = false;

  constructor(write: (items: readonly I[]) => Promise<readonly O[]>, options: { maxBatch: number }) {
    this.write = write;
    this.maxBatch = options.maxBatch;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        try {
          const outputs = await this.write(batch.map((waiting) => waiting.item));
          if (outputs.length !== batch.length) throw new Error(`a batch of ${batch.length} was answered with ${outputs.length} outputs`);
          batch.forEach((waiting, index) => waiting.resolve(outputs[index]!));
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
