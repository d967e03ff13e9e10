import { markSettingsChanged } from "./settings-changes";
import type { Db } from "./database";

export async function getRouting(db: Db, merchantId: string, mode: string): Promise<{ connectors: string[]; updated_at: string } | undefined> {
  const row = await db
    .selectFrom("routing")
    .select(["connectors", "updated_at"])
    .where("merchant_id", "=", merchantId)
    .where("mode", "=", mode as "test" | "live")
    .executeTakeFirst();
  return row && { connectors: JSON.parse(row.connectors) as string[], updated_at: row.updated_at };
}

export async function putRouting(db: Db, merchantId: string, mode: "test" | "live", connectors: string[], updatedAt: string): Promise<void> {
  const value = JSON.stringify(connectors);
  await db
    .insertInto("routing")
    .values({ merchant_id: merchantId, mode, connectors: value, updated_at: updatedAt })
    .onConflict((oc) => oc.columns(["merchant_id", "mode"]).doUpdateSet({ connectors: value, updated_at: updatedAt }))
    .execute();
  markSettingsChanged();
}
