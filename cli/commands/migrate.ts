import type { Command } from "commander";
import { loadConfig } from "../../server/config";
import { migrate } from "../../store/database";
import { openStore } from "../../store/open-store";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("Create or upgrade the database (in the data directory, or the PostgreSQL database)")
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .option("--database-url <url>", "a PostgreSQL database instead of SQLite in the data directory (env PAYGATE_DATABASE_URL)")
    .action(async (flags: { data?: string; databaseUrl?: string }) => {
      const config = loadConfig(flags);
      const store = openStore(config, { busyTimeoutMs: config.busyTimeoutMs });
      try {
        const applied = await migrate(store.db);
        process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "database is up to date\n");
      } finally {
        await store.close();
      }
    });
}
