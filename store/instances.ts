import type { Db } from "./database";

/**
 * Serving processes announce themselves in `settings` as `instance:<id>` = the time
 * (ms) their announcement lapses, so every process can count the live ones without
 * a table of its own.
 */
const PREFIX = "instance:";

/** Writes (or renews) this instance's announcement until `expiresAt`. */
export async function announceInstance(db: Db, id: string, expiresAt: number): Promise<void> {
  const value = String(expiresAt);
  await db
    .insertInto("settings")
    .values({ name: PREFIX + id, value })
    .onConflict((oc) => oc.column("name").doUpdateSet({ value }))
    .execute();
}

/** How many announcements are live at `now`; lapsed ones (a killed process) are deleted. */
export async function countLiveInstances(db: Db, now: number): Promise<number> {
  const rows = await db.selectFrom("settings").select(["name", "value"]).where("name", "like", `${PREFIX}%`).execute();
  const lapsed = rows.filter((row) => Number(row.value) <= now);
  // Only the value read: an instance that renewed meanwhile keeps its row.
  for (const row of lapsed) await db.deleteFrom("settings").where("name", "=", row.name).where("value", "=", row.value).execute();
  return rows.length - lapsed.length;
}

/** Withdraws this instance's announcement (a clean shutdown): the others count it out at once. */
export async function withdrawInstance(db: Db, id: string): Promise<void> {
  await db.deleteFrom("settings").where("name", "=", PREFIX + id).execute();
}
