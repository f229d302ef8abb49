import type { UploadChunk } from './upload-service.js';

export const CHUNK_BYTES = 64 * 1024;

export function chunk(index: number, bytes = CHUNK_BYTES): UploadChunk {
  return { data: Buffer.alloc(bytes, index % 256), index };
}

interface SourceOptions {
  /** How many chunks it has (default: endless). */
  count?: number;
  /** The chunk it never yields: that read waits until the source is closed. */
  stallAt?: number;
  /** Called on every read with how many chunks were read before it. */
  onRead?: (pulled: number) => void;
}

/**
 * A client stream's source whose reads a test can watch, as an upload's file stream would be read
 * (an iterator object, not a generator, so `return()` takes effect even while a read waits).
 */
export class WatchedSource implements AsyncIterable<UploadChunk> {
  /** Chunks handed out. */
  pulled = 0;
  /** Resolves when `return()` is called: the reader closed the source. */
  readonly closed: Promise<void>;
  /** Reads asked for after the source was closed: a reader must make none. */
  readsAfterClose = 0;
  private isClosed = false;
  private readonly close: () => void;
  private readonly options: SourceOptions;

  constructor(options: SourceOptions = {}) {
    this.options = options;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.closed = promise;
    this.close = resolve;
  }

  [Symbol.asyncIterator](): AsyncIterator<UploadChunk> {
    return {
      next: () => this.read(),
      return: () => {
        this.isClosed = true;
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private async read(): Promise<IteratorResult<UploadChunk>> {
    if (this.isClosed) {
      this.readsAfterClose += 1;
      return { done: true, value: undefined };
    }
    this.options.onRead?.(this.pulled);
    const next = this.pulled + 1;
    if (next > (this.options.count ?? Infinity)) return { done: true, value: undefined };
    if (next === this.options.stallAt) {
      await this.closed;
      return { done: true, value: undefined };
    }
    this.pulled = next;
    // Each chunk in its own turn, as a file stream's chunks come off a socket.
    await new Promise((resolve) => setImmediate(resolve));
    return { done: false, value: chunk(next) };
  }
}
