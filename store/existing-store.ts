import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR_SETTING, DATABASE_FILE, StoreError, type StoreLocation } from "./database";
import { openStore } from "./open-store";

/** Where a PostgreSQL database comes from, named in every error about it. */
export const DATABASE_URL_SETTING = "--database-url / PAYGATE_DATABASE_URL";

/**
 * Refuses a store that paygate never created, for every command but the ones that
 * create one (`serve`, `sandbox`, `migrate`): a mistyped data dir or database URL must
 * fail, not show an empty new store. A PostgreSQL database exists as soon as someone
 * creates it, so there the test is paygate's schema (its migrations table).
 */
export async function requireExistingStore(location: StoreLocation): Promise<void> {
  if (location.databaseUrl) return requireMigratedDatabase(location);
  const { dataDir } = location;
  const file = join(dataDir, DATABASE_FILE);
  if (!existsSync(dataDir)) throw new StoreError(`no data directory at ${dataDir} (set by ${DATA_DIR_SETTING}); create one with \`paygate migrate --data ${dataDir}\``);
  if (!statSync(dataDir).isDirectory()) throw new StoreError(`the data directory ${dataDir} (set by ${DATA_DIR_SETTING}) is not a directory`);
  if (!existsSync(file)) throw new StoreError(`no paygate database at ${file} (set by ${DATA_DIR_SETTING}); create one with \`paygate migrate --data ${dataDir}\``);
}

async function requireMigratedDatabase(location: StoreLocation): Promise<void> {
  const store = openStore({ ...location, databasePoolSize: 1 });
  try {
    const tables = await store.db.introspection.getTables({ withInternalKyselyTables: true });
    if (!tables.some((table) => table.name === "kysely_migration")) {
      throw new StoreError(`no paygate schema in the PostgreSQL database ${store.location} (set by ${DATABASE_URL_SETTING}); create it with \`paygate migrate\` on the same URL`);
    }
  } finally {
    await store.close();
  }
}
