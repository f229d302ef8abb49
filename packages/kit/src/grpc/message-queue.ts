import type { ServiceError } from '@grpc/grpc-js';
import type { CallStream } from './transport.js';

// Messages a stream may run ahead of its reader, either way, as HTTP/2 flow control would allow.
const STREAM_HIGH_WATER = 16;

/**
 * A stream's messages between the side writing them and the side reading them: a server stream's
 * from its handler to the caller, a client stream's from the caller to its handler.
 */
export class MessageQueue implements CallStream {
  private readonly messages: unknown[] = [];
  private finished = false;
  private failure: ServiceError | undefined;
  private wakeReader: (() => void) | undefined;
  private wakeWriter: (() => void) | undefined;
  private readonly onCancel: () => void;

  constructor(onCancel: () => void) {
    this.onCancel = onCancel;
  }

  /** Undefined while the reader keeps up; otherwise resolves once it has caught up or the call ended. */
  push(message: unknown): Promise<void> | undefined {
    if (this.finished) return undefined;
    this.messages.push(message);
    this.wake();
    if (this.messages.length < STREAM_HIGH_WATER) return undefined;
    return new Promise((resolve) => (this.wakeWriter = resolve));
  }

  end(): void {
    this.finished = true;
    this.wake();
  }

  /** Messages already written are still read; then the iteration throws `error`. */
  fail(error: ServiceError): void {
    if (this.finished) return;
    this.failure = error;
    this.end();
  }

  cancel(): void {
    if (!this.finished) this.onCancel();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown, void, undefined> {
    for (;;) {
      if (this.messages.length > 0) {
        const message = this.messages.shift();
        if (this.messages.length < STREAM_HIGH_WATER) this.releaseWriter();
        yield message;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.finished) return;
      await new Promise<void>((resolve) => (this.wakeReader = resolve));
    }
  }

  private wake(): void {
    const wake = this.wakeReader;
    this.wakeReader = undefined;
    wake?.();
    if (this.finished) this.releaseWriter();
  }

  private releaseWriter(): void {
    const release = this.wakeWriter;
    this.wakeWriter = undefined;
    release?.();
  }
}
