import { LRUCache } from 'lru-cache';
import type { AuthCache } from './auth-cache.js';

export interface MemoryAuthCacheOptions {
  /** Milliseconds of a monotonic clock (tests); default `performance.now`. */
  now?: () => number;
  /** The least recently used entries are dropped beyond this many. */
  maxEntries?: number;
}

/** In-process TTL cache for a single gateway (the local mode), on `lru-cache`. */
export class MemoryAuthCache implements AuthCache {
  private readonly entries: LRUCache<string, string>;

  constructor(options: MemoryAuthCacheOptions = {}) {
    // ttlResolution 0: staleness is judged on the clock at every read, not a value cached for a tick.
    this.entries = new LRUCache<string, string>({ max: options.maxEntries ?? 10_000, ttlResolution: 0, ...(options.now ? { perf: { now: options.now } } : {}) });
  }

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.entries.get(key));
  }

  set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.entries.set(key, value, { ttl: ttlSeconds * 1_000 });
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
