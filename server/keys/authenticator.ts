import { findApiKeyByHash, touchApiKeys } from "../../store/api-keys";
import type { Db, Store } from "../../store/database";
import type { ApiKeyRow } from "../../store/schema";
import type { Cache } from "../cache/cache";
import { ApiError } from "../errors";
import type { Logger } from "../logger";
import type { Actor } from "./actor";
import { hashKey, isWellFormedKey } from "./key-format";
import type { Scope } from "./scopes";

const CACHE_TTL_MS = 60_000;
const LAST_USED_FLUSH_MS = 5_000;

const authenticationRequired = () =>
  new ApiError(401, "authentication_required", "No valid Authorization header. Send `Authorization: Bearer <API key>`.");
const invalidKey = () => new ApiError(401, "invalid_api_key", "Invalid API key provided.");

/**
 * Turns an Authorization header into the calling `Actor`. Keys are cached in memory;
 * the cache is dropped whenever SQLite's `data_version` says another process (the
 * CLI) committed, so a key rotated or revoked elsewhere fails on the next request.
 * `last_used_at` is collected in memory and written in batches, off the hot path.
 */
export class Authenticator {
  private seenVersion: number;
  /** Epoch ms of each key's latest use: formatted as ISO only when written, not per request. */
  private readonly lastUsed = new Map<string, number>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
    private readonly cache: Cache,
    private readonly log: Logger,
    /** In dev mode every request acts as this actor, with or without a key. */
    private readonly devActor?: Actor,
  ) {
    this.seenVersion = store.dataVersion();
    this.flushTimer = setInterval(
      () => void this.flushLastUsed().catch((error: unknown) => this.log.warn({ err: error }, "last_used_at not written; retrying at the next flush")),
      LAST_USED_FLUSH_MS,
    );
    this.flushTimer.unref();
  }

  async authenticate(authorization: string | null): Promise<Actor> {
    if (this.devActor) return this.devActor;
    const match = authorization === null ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw authenticationRequired();
    const key = match[1] as string;
    if (!isWellFormedKey(key)) throw invalidKey();
    const hash = hashKey(key);
    this.dropCacheIfChangedElsewhere();
    let actor = this.cache.get<Actor>(`apikey:${hash}`);
    if (!actor) {
      const row = await findApiKeyByHash(this.db, hash);
      if (!row || row.status !== "active") throw invalidKey();
      actor = actorOf(row);
      this.cache.set(`apikey:${hash}`, actor, CACHE_TTL_MS);
    }
    this.lastUsed.set(actor.apiKeyId, Date.now());
    return actor;
  }

  /** Call after this process changed a key (rotate, revoke). */
  invalidate(): void {
    this.cache.clear();
  }

  /**
   * Writes the collected `last_used_at` values. A batch that could not be written (for
   * instance another process held the write lock past the busy timeout) is kept for
   * the next flush, where a use seen meanwhile wins.
   */
  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = new Map(this.lastUsed);
    this.lastUsed.clear();
    try {
      await touchApiKeys(this.db, new Map([...batch].map(([id, at]) => [id, new Date(at).toISOString()])));
    } catch (error) {
      for (const [id, at] of batch) if (!this.lastUsed.has(id)) this.lastUsed.set(id, at);
      throw error;
    }
    // Our own commit moves data_version only for other connections; nothing to drop.
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }

  /**
   * Asked on every request (a prepared PRAGMA on SQLite, a counter on PostgreSQL): a
   * key revoked or rotated by another process fails on the next request (CONTRACT §2).
   */
  private dropCacheIfChangedElsewhere(): void {
    const version = this.store.dataVersion();
    if (version !== this.seenVersion) {
      this.seenVersion = version;
      this.cache.clear();
    }
  }
}

/** What an active key row may do, as every caller of the services sees it. */
export function actorOf(row: ApiKeyRow & { merchant_short_id: string }): Actor {
  return {
    apiKeyId: row.id,
    merchantId: row.merchant_id,
    merchantShortId: row.merchant_short_id,
    mode: row.mode,
    role: row.role,
    keyType: row.type,
    scopes: new Set(JSON.parse(row.scopes) as Scope[]),
  };
}

/** 403 unless the actor holds `scope`. */
export function requireScope(actor: Actor, scope: Scope): void {
  if (!actor.scopes.has(scope)) {
    throw new ApiError(403, "insufficient_permissions", `This API key lacks the ${scope} scope required for this request.`);
  }
}
