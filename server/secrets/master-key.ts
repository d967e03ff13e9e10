import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, type Config } from "../config";

export const MASTER_KEY_FILE = "master.key";
/** The new key while a rotation is under way (server/secrets/rotate-master-key.ts). */
export const NEXT_MASTER_KEY_FILE = "master.key.next";

/** Reads a key file: base64 of 32 bytes. */
/** A key file's 32 bytes, or one line naming the file and what is wrong with it. */
export function readKeyFile(file: string): Buffer {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const key = Buffer.from(text.trim(), "base64");
  if (key.length !== 32) throw new ConfigError(file, "does not hold the base64 encoding of exactly 32 bytes (e.g. `openssl rand -base64 32`)");
  return key;
}

/** Makes a rename or unlink in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `key` to `file` all or nothing: a temporary file beside it, fsynced, renamed over it, the directory fsynced. */
export function writeKeyFileAtomically(dir: string, name: string, key: Buffer): void {
  const partial = join(dir, `${name}.${process.pid}.tmp`);
  const fd = openSync(partial, "w", 0o600);
  try {
    writeSync(fd, `${key.toString("base64")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(partial, join(dir, name));
  fsyncDir(dir);
}

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
  return readKeyFile(file);
}

/** The setting that supplies the master key, as the operator would name it. */
export function masterKeySetting(config: Pick<Config, "masterKey" | "dataDir">): string {
  return config.masterKey ? "PAYGATE_MASTER_KEY" : join(config.dataDir, MASTER_KEY_FILE);
}
