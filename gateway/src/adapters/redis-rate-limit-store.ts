import { createHash } from 'node:crypto';
import { DomainError } from '@agent-platform/kit';
import type { Redis } from 'ioredis';
import { windowBounds, windowState, type RateLimitOutcome, type RateLimitStore, type RateWindow } from './rate-limit-store.js';

/**
 * KEYS: one counter per window. ARGV: cost, count (1 = count, 0 = peek), then limit and ttl
 * (milliseconds) per window. Returns {allowed, count...}. Counts all windows or none, atomically.
 */
const SCRIPT = `
local cost = tonumber(ARGV[1])
local counting = ARGV[2] == '1'
local counts = {}
local allowed = 1
for i = 1, #KEYS do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] + cost > tonumber(ARGV[1 + i * 2]) then allowed = 0 end
end
if allowed == 1 and counting then
  for i = 1, #KEYS do
    counts[i] = redis.call('INCRBY', KEYS[i], cost)
    if counts[i] == cost then redis.call('PEXPIRE', KEYS[i], ARGV[2 + i * 2]) end
  end
end
table.insert(counts, 1, allowed)
return counts
`;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

export interface RedisRateLimitStoreOptions {
  /** Prepended to every key, e.g. `gw:`. */
  prefix: string;
  now?: () => number;
}

/** Counters shared by every gateway replica. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimitStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  consume(key: string, windows: readonly RateWindow[], cost = 1): Promise<RateLimitOutcome> {
    return this.apply(key, windows, cost, true);
  }

  peek(key: string, windows: readonly RateWindow[]): Promise<RateLimitOutcome> {
    return this.apply(key, windows, 1, false);
  }

  /** The connection belongs to the redis plugin, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private async apply(key: string, windows: readonly RateWindow[], cost: number, counting: boolean): Promise<RateLimitOutcome> {
    if (windows.length === 0) return { allowed: true, windows: [] };
    const nowMs = this.now();
    const bounds = windows.map((window) => windowBounds(window, nowMs));
    const keys = windows.map((window) => this.slot(key, window, nowMs));
    const args: (string | number)[] = [cost, counting ? 1 : 0];
    windows.forEach((window, i) => args.push(window.limit, Math.max(1, (bounds[i]?.endMs ?? nowMs) - nowMs)));
    const reply = await this.guard(() => this.evaluate(keys, args));
    if (!Array.isArray(reply) || reply.length !== windows.length + 1) {
      throw new Error('Unexpected reply from the rate-limit script');
    }
    const numbers = reply.map(Number);
    return {
      allowed: numbers[0] === 1,
      windows: windows.map((window, i) => windowState(window, numbers[i + 1] ?? 0, bounds[i]?.endMs ?? nowMs)),
    };
  }

  private async evaluate(keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
        return this.redis.eval(SCRIPT, keys.length, ...keys, ...args);
      }
      throw error;
    }
  }

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new DomainError('service_unavailable', 'Rate limiting is unavailable; retry shortly.', { cause: error });
    }
  }

  /** The hash tag keeps one key's windows in one Redis Cluster slot, as the script needs. */
  private slot(key: string, window: RateWindow, nowMs: number): string {
    return `${this.options.prefix}rl:{${key}}:${window.seconds}:${windowBounds(window, nowMs).startMs}`;
  }
}
