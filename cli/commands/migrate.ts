import type { Command } from "commander";
import { loadConfig } from "../../server/config";
import { migrate, openStore } from "../../store/database";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("Create or upgrade the database in the data directory")
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .action(async (flags: { data?: string }) => {
      const config = loadConfig(flags);
      const store = openStore(config.dataDir, { busyTimeoutMs: config.busyTimeoutMs });
      try {
        const applied = await migrate(store.db);
        process.stdout.write(applied.length ? `applied: ${applied.join(", ")}\n` : "database is up to date\n");
      } finally {
        await store.close();
      }
    });
}
