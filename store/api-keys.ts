import type { Db } from "./database";
import { olderThan, type Cursor } from "./keyset";
import type { ApiKeyRow, ApiKeyUpdate, NewApiKeyRow } from "./schema";

export async function insertApiKey(db: Db, row: NewApiKeyRow): Promise<void> {
  await db.insertInto("api_keys").values(row).execute();
}

/** The key with this hash, with its merchant's short id, for authentication. */
export async function findApiKeyByHash(db: Db, keyHash: string): Promise<(ApiKeyRow & { merchant_short_id: string }) | undefined> {
  return db
    .selectFrom("api_keys")
    .innerJoin("merchants", "merchants.id", "api_keys.merchant_id")
    .selectAll("api_keys")
    .select("merchants.short_id as merchant_short_id")
    .where("api_keys.key_hash", "=", keyHash)
    .executeTakeFirst();
}

export async function findApiKey(db: Db, merchantId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom("api_keys").selectAll().where("merchant_id", "=", merchantId).where("id", "=", id).executeTakeFirst();
}

/**
 * A merchant's keys newest first, of one mode when given; with `page`, at most
 * `page.limit` rows after `page.after` (keyset order).
 */
export async function listApiKeys(
  db: Db,
  owner: { merchantId: string; mode?: ApiKeyRow["mode"] },
  page?: { limit: number; after?: Cursor | undefined },
): Promise<ApiKeyRow[]> {
  let query = db.selectFrom("api_keys").selectAll().where("merchant_id", "=", owner.merchantId);
  if (owner.mode) query = query.where("mode", "=", owner.mode);
  if (page?.after) query = query.where(olderThan(page.after));
  if (page) query = query.limit(page.limit);
  return query.orderBy("created_at", "desc").orderBy("id", "desc").execute();
}

/** Updates an active key; returns whether it was (still) active. */
export async function updateActiveApiKey(db: Db, id: string, update: ApiKeyUpdate): Promise<boolean> {
  const result = await db.updateTable("api_keys").set(update).where("id", "=", id).where("status", "=", "active").executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Writes the batched `last_used_at` values in one statement per key. */
export async function touchApiKeys(db: Db, lastUsed: ReadonlyMap<string, string>): Promise<void> {
  if (lastUsed.size === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const [id, at] of lastUsed) {
      // Several processes flush their own uses: an older one never overwrites a newer.
      await trx
        .updateTable("api_keys")
        .set({ last_used_at: at })
        .where("id", "=", id)
        .where((eb) => eb.or([eb("last_used_at", "is", null), eb("last_used_at", "<", at)]))
        .execute();
    }
  });
}
