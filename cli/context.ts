import type { Command } from "commander";
import type { AppContext } from "../server/app-context";
import { loadConfig } from "../server/config";
import { createLoggers } from "../server/logger";
import { requireExistingStore } from "../store/existing-store";

export interface DataFlags {
  data?: string;
  databaseUrl?: string;
  json?: boolean;
}

/** `--data` and `--json`, which every store command takes. */
export function withCommonOptions(command: Command): Command {
  return command
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .option("--database-url <url>", "a PostgreSQL database instead of SQLite in the data directory (env PAYGATE_DATABASE_URL)")
    .option("--json", "print JSON for scripts instead of a table");
}

/**
 * Runs a command against the same store and services as the server: the CLI is a
 * second front door, never a second implementation. Logs go to stderr. Only `serve`,
 * `sandbox` and `migrate` create a store; these commands refuse a missing one.
 */
export async function withApp<T>(flags: DataFlags, fn: (app: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig({ data: flags.data, databaseUrl: flags.databaseUrl }, { ...process.env, PAYGATE_DEV_MODE: "" });
  await requireExistingStore(config);
  const { closeAppContext, createAppContext } = await import("../server/server");
  const app = await createAppContext(config, createLoggers(config.logLevel === "info" ? "warn" : config.logLevel, 2));
  try {
    return await fn(app);
  } finally {
    await closeAppContext(app);
  }
}
