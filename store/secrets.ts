import { sql } from "kysely";
import type { Db } from "./database";

/** Appends a version; the next version number is computed in the same statement. */
export async function insertSecretVersion(db: Db, path: string, sealed: (version: number) => string, createdAt: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("secrets")
      .select(sql<number>`coalesce(max(version), 0)`.as("latest"))
      .where("path", "=", path)
      .executeTakeFirstOrThrow();
    const version = row.latest + 1;
    await trx.insertInto("secrets").values({ path, version, ciphertext: sealed(version), created_at: createdAt }).execute();
    return version;
  });
}

export async function latestSecretVersion(db: Db, path: string): Promise<{ version: number; ciphertext: string } | undefined> {
  return db.selectFrom("secrets").select(["version", "ciphertext"]).where("path", "=", path).orderBy("version", "desc").limit(1).executeTakeFirst();
}

/** Every path with its latest version and when that was written; never the values. */
export async function listSecretPaths(db: Db): Promise<Array<{ path: string; version: number; updated_at: string }>> {
  const rows = await db.selectFrom("secrets").select(["path", "version", "created_at"]).orderBy("path").orderBy("version").execute();
  const latest = new Map<string, { path: string; version: number; updated_at: string }>();
  for (const row of rows) latest.set(row.path, { path: row.path, version: row.version, updated_at: row.created_at });
  return [...latest.values()];
}
