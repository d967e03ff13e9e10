import { compiled } from "./compiled-query";
import type { Db } from "./database";
import type { IdempotencyKeyRow, IdempotencyKeysTable } from "./schema";

/** Everything that scopes an Idempotency-Key (CONTRACT §3). */
export interface IdempotencyScope {
  apiKeyId: string;
  method: string;
  path: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Claim =
  | { kind: "acquired"; lockedAt: number }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "mismatch" }
  | { kind: "in_flight" };

/**
 * The fingerprint of a row written before fingerprints were keyed (migration 003): its
 * parameters are unknown, so it matches any request with its key.
 */
export const SCRUBBED_FINGERPRINT = "scrubbed";

/** The primary key of a scope's row, for `where((eb) => eb.and(rowKey(scope)))`. */
function rowKey(scope: IdempotencyScope) {
  return { api_key_id: scope.apiKeyId, method: scope.method, path: scope.path, key: scope.key };
}

const findRecordQuery = compiled((db, key: ReturnType<typeof rowKey>) => db.selectFrom("idempotency_keys").selectAll().where((eb) => eb.and(key)));

async function findRecord(db: Db, scope: IdempotencyScope): Promise<IdempotencyKeyRow | undefined> {
  return (await findRecordQuery(db, rowKey(scope))).rows[0];
}

/** What a live record answers by itself: its stored answer, or a mismatch of parameters. */
function settledBy(record: IdempotencyKeyRow, fingerprint: string, now: number): Extract<Claim, { kind: "replay" | "mismatch" }> | undefined {
  if (record.expires_at <= now) return undefined;
  if (record.fingerprint !== fingerprint && record.fingerprint !== SCRUBBED_FINGERPRINT) return { kind: "mismatch" };
  if (record.state !== "done") return undefined;
  return {
    kind: "replay",
    response: {
      status: record.response_status ?? 500,
      headers: JSON.parse(record.response_headers ?? "{}") as Record<string, string>,
      body: record.response_body ?? "",
    },
  };
}

/**
 * The answer a key already settled, read without taking the write lock: a record
 * once done only ever expires, so a replay or a mismatch needs no transaction.
 * Undefined when the key must be claimed (new, expired, or still in flight).
 */
export async function settledClaim(db: Db, scope: IdempotencyScope, fingerprint: string, now: number): Promise<Claim | undefined> {
  const record = await findRecord(db, scope);
  return record && settledBy(record, fingerprint, now);
}

const claimFreshQuery = compiled((db, fresh: IdempotencyKeysTable) => db.insertInto("idempotency_keys").values(fresh).onConflict((oc) => oc.doNothing()));

/**
 * Takes the lock row for a request, or says why not. Every step is one statement
 * guarded by what was read (compare-and-set on `locked_at`), so two processes on one
 * database can never both acquire it.
 */
export async function claimIdempotencyKey(
  db: Db,
  scope: IdempotencyScope,
  fingerprint: string,
  now: number,
  ttlMs: number,
  lockTimeoutMs: number,
): Promise<Claim> {
  const fresh: IdempotencyKeysTable = {
    api_key_id: scope.apiKeyId,
    method: scope.method,
    path: scope.path,
    key: scope.key,
    fingerprint,
    state: "in_flight",
    locked_at: now,
    response_status: null,
    response_headers: null,
    response_body: null,
    created_at: now,
    expires_at: now + ttlMs,
  };
  const inserted = await claimFreshQuery(db, fresh);
  if ((inserted.numAffectedRows ?? 0n) > 0n) return { kind: "acquired", lockedAt: now };

  const existing = await findRecord(db, scope);
  if (!existing) return claimIdempotencyKey(db, scope, fingerprint, now, ttlMs, lockTimeoutMs);
  const settled = settledBy(existing, fingerprint, now);
  if (settled) return settled;
  const abandoned = existing.state === "in_flight" && existing.locked_at <= now - lockTimeoutMs;
  // A request still refreshing its lock is never taken over, however old its record.
  if (existing.state === "in_flight" && !abandoned) return { kind: "in_flight" };
  const taken = await db
    .updateTable("idempotency_keys")
    .set({ ...fresh })
    .where((eb) => eb.and(rowKey(scope)))
    .where("locked_at", "=", existing.locked_at)
    .where("state", "=", existing.state)
    .executeTakeFirst();
  return taken.numUpdatedRows > 0n ? { kind: "acquired", lockedAt: now } : { kind: "in_flight" };
}

/**
 * Bumps the lock this request holds from `lockedAt` to `now` (compare-and-set: a lock
 * taken over meanwhile is left alone), and keeps the record from expiring under it.
 * Returns whether the lock is still this request's.
 */
export async function refreshIdempotencyLock(db: Db, scope: IdempotencyScope, lockedAt: number, now: number, lockTimeoutMs: number): Promise<boolean> {
  const result = await db
    .updateTable("idempotency_keys")
    .set((eb) => ({
      locked_at: now,
      expires_at: eb.case().when("expires_at", "<", now + lockTimeoutMs).then(now + lockTimeoutMs).else(eb.ref("expires_at")).end(),
    }))
    .where((eb) => eb.and(rowKey(scope)))
    .where("state", "=", "in_flight")
    .where("locked_at", "=", lockedAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

const completeQuery = compiled((db, key: ReturnType<typeof rowKey>, lockedAt: number, status: number, headers: string, body: string) =>
  db
    .updateTable("idempotency_keys")
    .set({ state: "done", response_status: status, response_headers: headers, response_body: body })
    .where((eb) => eb.and(key))
    .where("state", "=", "in_flight")
    .where("locked_at", "=", lockedAt),
);

/** Stores the answer on the lock this request holds; false if the lock was lost. */
export async function completeIdempotencyKey(db: Db, scope: IdempotencyScope, lockedAt: number, response: StoredResponse): Promise<boolean> {
  const result = await completeQuery(db, rowKey(scope), lockedAt, response.status, JSON.stringify(response.headers), response.body);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * Frees the key for a retry (the answer was not one to keep). `keepParameters`: the
 * record stays, `open`, so only a retry with the same parameters can take it; used
 * after a failure that may have reached the processor (a timeout, a processor error),
 * whose retry reuses the processor-side idempotency key: other parameters under it
 * could record an amount other than the one charged. Otherwise the record goes, and
 * the key is free for any parameters (a 400 is fixed by changing them).
 */
export async function releaseIdempotencyKey(db: Db, scope: IdempotencyScope, lockedAt: number, keepParameters: boolean): Promise<void> {
  const held = { ...rowKey(scope), state: "in_flight" as const, locked_at: lockedAt };
  if (keepParameters) await db.updateTable("idempotency_keys").set({ state: "open" }).where((eb) => eb.and(held)).execute();
  else await db.deleteFrom("idempotency_keys").where((eb) => eb.and(held)).execute();
}

export async function purgeExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom("idempotency_keys").where("expires_at", "<=", now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Forgets every stored fingerprint (their key changed: a master-key rotation, or the
 * unkeyed ones of earlier versions): such a key replays its answer for any parameters
 * until it expires.
 */
export async function scrubFingerprints(db: Db): Promise<void> {
  await db.updateTable("idempotency_keys").set({ fingerprint: SCRUBBED_FINGERPRINT }).execute();
}
