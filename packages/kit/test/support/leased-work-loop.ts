/** Test doubles for LeasedWorkLoop's tests: its contract is with its source, so an in-memory one stands in. */

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets a test wait for a condition to become true without polling on a clock. */
export class Changes {
  private waiters: (() => void)[] = [];

  notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  async until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/**
 * The queue as the loop sees it: a claim takes what is due when it runs (like the SQL snapshot),
 * then, when a gate is set, holds its answer until the test opens the gate.
 */
export class MemorySource {
  readonly due: string[] = [];
  readonly released: string[] = [];
  claims = 0;
  gate: Promise<void> | undefined;
  failNext: Error | undefined;

  constructor(private readonly changes: Changes) {}

  async claim(limit: number): Promise<string[]> {
    this.claims += 1;
    this.changes.notify();
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    const taken = this.due.splice(0, limit);
    await this.gate;
    return taken;
  }

  release(item: string): Promise<void> {
    this.released.push(item);
    this.changes.notify();
    return Promise.resolve();
  }
}

/** A `process` that reports each item it is given through `reached`. */
export function reporting(reached: Deferred<string>): (item: string) => Promise<void> {
  return (item) => {
    reached.resolve(item);
    return Promise.resolve();
  };
}
