import { DomainError } from '@agent-platform/kit';
import type { Redis } from 'ioredis';
import type { AuthCache } from './auth-cache.js';

/** The cache shared by every gateway replica, so a revocation on one is seen by all. */
export class RedisAuthCache implements AuthCache {
  constructor(
    private readonly redis: Redis,
    private readonly options: { prefix: string },
  ) {}

  async get(key: string): Promise<string | undefined> {
    const value = await this.guard(() => this.redis.get(this.key(key)));
    return value ?? undefined;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.guard(() => this.redis.set(this.key(key), value, 'EX', ttlSeconds));
  }

  async delete(...keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.guard(() => this.redis.del(...keys.map((key) => this.key(key))));
  }

  /** The connection belongs to the redis plugin, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  private key(key: string): string {
    return `${this.options.prefix}auth:${key}`;
  }

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new DomainError('service_unavailable', 'The authentication cache is unavailable; retry shortly.', { cause: error });
    }
  }
}
