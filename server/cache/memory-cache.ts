import type { Cache } from "./cache";

interface Entry {
  value: unknown;
  expiresAt: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Bounded so a flood of distinct keys cannot grow memory without limit. */
const MAX_ENTRIES = 50_000;

export class MemoryCache implements Cache {
  private readonly entries = new Map<string, Entry>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, value: T, ttlMs: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  takeToken(key: string, perSecond: number, burst: number): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    if (this.buckets.size >= MAX_ENTRIES && !this.buckets.has(key)) this.buckets.clear();
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / perSecond) * 1000);
  }

  async ping(): Promise<boolean> {
    const probe = "__ping__";
    this.set(probe, true, 1000);
    const ok = this.get<boolean>(probe) === true;
    this.delete(probe);
    return ok;
  }
}
