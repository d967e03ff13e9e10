import type { Command } from "commander";
import { resolve } from "node:path";
import { loadConfig, POSTGRES_BACKUP_HINT } from "../../server/config";
import { masterKeySetting } from "../../server/secrets/master-key";
import { BackupError, restoreDatabase } from "../../store/backup";
import { StoreInUseError } from "../../store/database";
import { OperationError } from "../exit";

export function registerRestore(program: Command): void {
  program
    .command("restore")
    .description("Replace the data directory's database with a verified backup (stop the server first)")
    .requiredOption("--from <file>", "a backup written by `paygate backup`")
    .requiredOption("--data <dir>", "the data directory to restore into")
    .option("--force", "replace an existing database")
    .action(async (flags: { from: string; data: string; force?: boolean }) => {
      const config = loadConfig(flags);
      if (config.databaseUrl) throw new OperationError(POSTGRES_BACKUP_HINT);
      const report = await restoreDatabase(resolve(flags.from), config.dataDir, { force: flags.force }).catch((error: unknown) => {
        throw error instanceof BackupError || error instanceof StoreInUseError ? new OperationError(error.message) : error;
      });
      process.stdout.write(
        `restored ${report.file} from ${resolve(flags.from)} (integrity ok, schema ${report.migrations.at(-1) ?? "empty"})\n` +
          `start it with the master key of the backup's time (${masterKeySetting(config)}): another key cannot read its card numbers, secrets and webhook secrets\n`,
      );
    });
}
