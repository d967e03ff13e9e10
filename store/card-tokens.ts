import type { Db } from "./database";
import type { CardTokenRow } from "./schema";

export async function insertCardToken(db: Db, row: CardTokenRow): Promise<void> {
  await db.insertInto("card_tokens").values(row).execute();
}

/** A token of this merchant and mode only: others look the same as unknown ones. */
export async function findCardToken(db: Db, merchantId: string, mode: string, token: string): Promise<CardTokenRow | undefined> {
  return db
    .selectFrom("card_tokens")
    .selectAll()
    .where("token", "=", token)
    .where("merchant_id", "=", merchantId)
    .where("mode", "=", mode as CardTokenRow["mode"])
    .executeTakeFirst();
}
