import type { Command } from "commander";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../server/config";
import { MASTER_KEY_FILE, readKeyFile } from "../../server/secrets/master-key";
import { rotateMasterKey, RotationError, settleInterruptedRotation, type RotationStep } from "../../server/secrets/rotate-master-key";
import { DATABASE_FILE, migrate, StoreInUseError } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { OperationError } from "../exit";

/**
 * Test hook: the step at which the rotation kills its own process (SIGKILL, no
 * cleanup), to prove a crash there leaves a store that starts with the matching key.
 */
const CRASH_AT_ENV = "PAYGATE_TEST_ROTATION_CRASH_AT";

function crashAt(step: RotationStep): void {
  if (process.env[CRASH_AT_ENV] === step) process.kill(process.pid, "SIGKILL");
}

function newKeyFrom(file: string | undefined): Buffer | undefined {
  if (file) return readKeyFile(file);
  const value = process.env.PAYGATE_NEW_MASTER_KEY;
  if (!value) return undefined;
  const key = Buffer.from(value, "base64");
  if (key.length !== 32) throw new OperationError("PAYGATE_NEW_MASTER_KEY must be the base64 encoding of exactly 32 bytes (e.g. `openssl rand -base64 32`)");
  return key;
}

export function registerMasterKey(program: Command): void {
  const masterKey = program.command("master-key").description("The key that encrypts stored secrets, card numbers and webhook secrets");
  masterKey
    .command("rotate")
    .description("Re-encrypt everything under a new master key in one transaction (stop the server first)")
    .option("--data <dir>", "data directory (default ./paygate-data, env PAYGATE_DATA_DIR)")
    .option("--new-key-file <file>", "the new key (base64 of 32 bytes); required when PAYGATE_MASTER_KEY is set (or env PAYGATE_NEW_MASTER_KEY), generated otherwise")
    .action(async (flags: { data?: string; newKeyFile?: string }) => {
      const config = loadConfig(flags);
      if (config.databaseUrl) throw new OperationError("master-key rotate needs every process stopped, which paygate can make sure of only on SQLite; on PostgreSQL it is not supported yet");
      const database = join(config.dataDir, DATABASE_FILE);
      if (!existsSync(database)) throw new OperationError(`no paygate database at ${database} (check --data / PAYGATE_DATA_DIR)`);
      if (!config.masterKey && !existsSync(join(config.dataDir, MASTER_KEY_FILE))) {
        throw new OperationError(`no master key to rotate: neither PAYGATE_MASTER_KEY nor ${join(config.dataDir, MASTER_KEY_FILE)} is set`);
      }
      const newKey = newKeyFrom(flags.newKeyFile);
      let store;
      try {
        store = openSqliteStore(config.dataDir, { busyTimeoutMs: config.busyTimeoutMs, exclusive: true });
      } catch (error) {
        if (error instanceof StoreInUseError) throw new OperationError(`${error.message} before rotating the master key`);
        throw error;
      }
      try {
        await migrate(store.db);
        await settleInterruptedRotation(store.db, config);
        const oldKey = config.masterKey ? Buffer.from(config.masterKey, "base64") : readKeyFile(join(config.dataDir, MASTER_KEY_FILE));
        const result = await rotateMasterKey(store.db, config, oldKey, { newKey, onStep: crashAt }).catch((error: unknown) => {
          throw error instanceof RotationError ? new OperationError(error.message) : error;
        });
        process.stdout.write(
          `re-encrypted ${result.secrets} secret versions, ${result.cardTokens} card numbers, ${result.webhookSecrets} webhook signing secrets${result.canary ? " and the key canary" : ""}\n` +
            (result.keyFile
              ? `the new key is in ${result.keyFile}; the old key no longer reads this data: replace the key in your backups\n`
              : "now set PAYGATE_MASTER_KEY to the new key before starting paygate: the old key no longer reads this data\n"),
        );
      } finally {
        await store.close();
      }
    });
}
