/**
 * The cache paygate keeps beside its database: API key look-ups and rate-limit
 * buckets. The in-process implementation (memory-cache.ts) serves one server; a
 * shared one (Redis) can implement the same interface for several.
 */
export interface Cache {
  get<T>(key: string): T | undefined;
  set<T>(key: string, value: T, ttlMs: number): void;
  delete(key: string): void;
  /** Drops every entry; used when another process changed the database. */
  clear(): void;
  /**
   * Takes one token from the bucket `key` (refilled at `perSecond`, holding at most
   * `burst`). Returns 0 when a token was taken, else the ms until one is available.
   */
  takeToken(key: string, perSecond: number, burst: number): number;
  /** Readiness: whether the cache answers. */
  ping(): Promise<boolean>;
}
