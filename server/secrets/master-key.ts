import { randomBytes } from "node:crypto";
import { existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";

export const MASTER_KEY_FILE = "master.key";

/** Writes a new key file unless one exists; link() makes "create if absent" atomic across processes. */
function createKeyFileOnce(file: string): void {
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  try {
    linkSync(partial, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(partial);
  }
}

/**
 * The 32-byte master key: `PAYGATE_MASTER_KEY` (base64) when set, otherwise the data
 * dir's `master.key`, created once with mode 0600. Losing it makes stored secrets,
 * card numbers and webhook secrets unreadable: back it up with the database.
 */
export function loadMasterKey(config: Pick<Config, "masterKey" | "dataDir">): Buffer {
  if (config.masterKey) return Buffer.from(config.masterKey, "base64");
  const file = join(config.dataDir, MASTER_KEY_FILE);
  if (!existsSync(file)) createKeyFileOnce(file);
  const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key`);
  return key;
}

/** The setting that supplies the master key, as the operator would name it. */
export function masterKeySetting(config: Pick<Config, "masterKey" | "dataDir">): string {
  return config.masterKey ? "PAYGATE_MASTER_KEY" : join(config.dataDir, MASTER_KEY_FILE);
}
