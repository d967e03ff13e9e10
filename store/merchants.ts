import type { Db } from "./database";
import type { MerchantRow } from "./schema";
import { UUID_PATTERN } from "../server/ids";
import { olderThan } from "./keyset";

export async function insertMerchant(db: Db, row: MerchantRow): Promise<void> {
  await db.insertInto("merchants").values(row).execute();
}

/** By UUID or `mrc_` short id. */
export async function findMerchant(db: Db, idOrShortId: string): Promise<MerchantRow | undefined> {
  const column = UUID_PATTERN.test(idOrShortId) ? "id" : "short_id";
  const value = column === "id" ? idOrShortId.toLowerCase() : idOrShortId;
  return db.selectFrom("merchants").selectAll().where(column, "=", value).executeTakeFirst();
}

/** Newest first, `limit + 1` rows so the caller can tell `has_more`. */
export async function listMerchants(db: Db, limit: number, startingAfter?: MerchantRow): Promise<MerchantRow[]> {
  let query = db.selectFrom("merchants").selectAll().orderBy("created_at", "desc").orderBy("id", "desc").limit(limit + 1);
  if (startingAfter) {
    query = query.where(olderThan(startingAfter));
  }
  return query.execute();
}
