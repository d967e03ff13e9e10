import type { Db } from "./database";

/** Small named values paygate keeps about itself (e.g. the dev-mode merchant). */
export async function getSetting(db: Db, name: string): Promise<string | undefined> {
  const row = await db.selectFrom("settings").select("value").where("name", "=", name).executeTakeFirst();
  return row?.value;
}

export async function setSetting(db: Db, name: string, value: string): Promise<void> {
  await db
    .insertInto("settings")
    .values({ name, value })
    .onConflict((oc) => oc.column("name").doUpdateSet({ value }))
    .execute();
}

/** Writes the setting unless it exists; the first writer wins across processes. */
export async function insertSettingIfAbsent(db: Db, name: string, value: string): Promise<void> {
  await db.insertInto("settings").values({ name, value }).onConflict((oc) => oc.column("name").doNothing()).execute();
}
