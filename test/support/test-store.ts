import type { OpenOptions, Store } from "../../store/database";
import { openStore } from "../../store/open-store";
import { engineEnv } from "./harness";

/**
 * Opens the store of a test's data dir on the run's engine, as a server booted on
 * that dir would (bootServer): SQLite in the dir, or the dir's own PostgreSQL database.
 */
export async function openTestStore(dataDir: string, options: OpenOptions = {}): Promise<Store> {
  const env = await engineEnv(dataDir);
  return openStore({ dataDir, databaseUrl: env.PAYGATE_DATABASE_URL }, options);
}
