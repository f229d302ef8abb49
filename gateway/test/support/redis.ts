import { randomUUID } from 'node:crypto';

/** The Redis the gateway's Redis-backed adapters are tested against. */
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A unique Redis key prefix, so tests sharing one Redis never see each other's keys. */
export function uniquePrefix(): string {
  return `gwtest:${randomUUID()}:`;
}
