/**
 * A small TTL cache of authentication answers (API-key principals, memberships), shared by the
 * gateway replicas when it lives in Redis. Values are opaque strings; callers serialise.
 */
export interface AuthCache {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  delete(...keys: string[]): Promise<void>;
  close(): Promise<void>;
}
