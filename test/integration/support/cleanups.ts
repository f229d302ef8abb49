import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

export type Defer = (cleanup: () => Promise<unknown>) => void;

/** Registers an afterEach that runs the cleanups a test deferred, last first; returns `defer`. */
export function deferredCleanups(): Defer {
  const pending: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of pending.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => void pending.push(cleanup);
}

/** A new directory under the system's temporary one, removed after the test. */
export async function temporaryDirectory(prefix: string, defer: Defer): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  defer(() => rm(path, { recursive: true, force: true }));
  return path;
}
