import type { AuthCache } from './auth-cache.js';

export interface MemoryAuthCacheOptions {
  now?: () => number;
  /** Oldest entries are dropped beyond this many. */
  maxEntries?: number;
}

/** In-process TTL cache for a single gateway (the local mode). */
export class MemoryAuthCache implements AuthCache {
  private readonly entries = new Map<string, { value: string; expiresAtMs: number }>();
  private readonly now: () => number;
  private readonly maxEntries: number;

  constructor(options: MemoryAuthCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  get(key: string): Promise<string | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve(undefined);
    if (entry.expiresAtMs <= this.now()) {
      this.entries.delete(key);
      return Promise.resolve(undefined);
    }
    return Promise.resolve(entry.value);
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAtMs: this.now() + ttlSeconds * 1000 });
    // Map iteration follows insertion order, so the first keys are the oldest.
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries) break;
      this.entries.delete(oldest);
    }
    return Promise.resolve();
  }

  delete(...keys: string[]): Promise<void> {
    for (const key of keys) this.entries.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}
