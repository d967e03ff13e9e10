import { markSettingsChanged } from "./settings-changes";
import { sql } from "kysely";
import type { Db } from "./database";
import { violatesUnique } from "./db-errors";

/** Racing writers of one path can each see the same latest version; each loss means another writer won. */
const MAX_VERSION_ATTEMPTS = 20;

/**
 * Appends a version numbered one past the latest. The (path, version) primary key,
 * not a lock or an isolation level, keeps two concurrent writers (two processes, or
 * PostgreSQL's READ COMMITTED) from taking one number: the loser reads again and
 * retries, so no version is lost.
 */
export async function insertSecretVersion(db: Db, path: string, sealed: (version: number) => string, createdAt: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const row = await db
      .selectFrom("secrets")
      .select(sql<number>`coalesce(max(version), 0)`.as("latest"))
      .where("path", "=", path)
      .executeTakeFirstOrThrow();
    const version = row.latest + 1;
    try {
      await db.insertInto("secrets").values({ path, version, ciphertext: sealed(version), created_at: createdAt }).execute();
      markSettingsChanged();
      return version;
    } catch (error) {
      if (attempt >= MAX_VERSION_ATTEMPTS || !violatesUnique(error, "secrets", ["path", "version"])) throw error;
    }
  }
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
