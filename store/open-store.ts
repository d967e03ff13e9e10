import { DEFAULT_POOL_SIZE, type OpenOptions, type Store, type StoreLocation } from "./database";
import { openPostgresStore } from "./postgres-store";
import { openSqliteStore } from "./sqlite-store";

/** PostgreSQL when a database URL is set, else SQLite in the data dir. */
export function openStore(location: StoreLocation, options: OpenOptions = {}): Store {
  if (location.databaseUrl) return openPostgresStore(location.databaseUrl, location.databasePoolSize ?? DEFAULT_POOL_SIZE, options);
  return openSqliteStore(location.dataDir, options);
}
