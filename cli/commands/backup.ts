import type { Command } from "commander";
import { resolve } from "node:path";
import { loadConfig, POSTGRES_BACKUP_HINT } from "../../server/config";
import { masterKeySetting } from "../../server/secrets/master-key";
import { backupDatabase, BackupError } from "../../store/backup";
import { OperationError } from "../exit";

export function registerBackup(program: Command): void {
  program
    .command("backup")
    .description("Copy the database to FILE while the server keeps serving (consistent, verified); the master key is NOT in it")
    .requiredOption("--to <file>", "where to write the backup (replaced only once the new copy is complete and verified)")
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .action(async (flags: { to: string; data?: string }) => {
      const config = loadConfig(flags);
      if (config.databaseUrl) throw new OperationError(POSTGRES_BACKUP_HINT);
      const report = await backupDatabase(config.dataDir, resolve(flags.to)).catch((error: unknown) => {
        throw error instanceof BackupError ? new OperationError(error.message) : error;
      });
      process.stdout.write(
        `backup written to ${report.file} (${report.bytes} bytes, integrity ok, schema ${report.migrations.at(-1) ?? "empty"})\n` +
          `the master key is NOT in the backup: keep a copy of ${masterKeySetting(config)} too; without it the card numbers, secrets and webhook secrets in the backup cannot be read\n`,
      );
    });
}
