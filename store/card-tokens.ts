import { compiled } from "./compiled-query";
import type { Db } from "./database";
import type { CardTokenRow } from "./schema";

export async function insertCardToken(db: Db, row: CardTokenRow): Promise<void> {
  await db.insertInto("card_tokens").values(row).execute();
}

const findCardTokenQuery = compiled((db, merchantId: string, mode: CardTokenRow["mode"], token: string) =>
  db.selectFrom("card_tokens").selectAll().where("token", "=", token).where("merchant_id", "=", merchantId).where("mode", "=", mode),
);

/** A token of this merchant and mode only: others look the same as unknown ones. */
export async function findCardToken(db: Db, merchantId: string, mode: string, token: string): Promise<CardTokenRow | undefined> {
  return (await findCardTokenQuery(db, merchantId, mode as CardTokenRow["mode"], token)).rows[0];
}
