import BetterSqlite3 from "better-sqlite3";
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DATABASE_FILE } from "./database";
import { lockExclusively } from "./sqlite-store";
import { migrationProvider } from "./migrations";
import { nativeBinding } from "./native-binding";

/** kysely's bookkeeping table: which migrations a database has. */
const MIGRATION_TABLE = "kysely_migration";

/** A backup or restore that cannot be done; the message names the file. */
export class BackupError extends Error {
  override name = "BackupError";
}

function open(file: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  return new BetterSqlite3(file, { ...options, nativeBinding: nativeBinding() as string });
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function migrationsOf(db: BetterSqlite3.Database, file: string): string[] {
  try {
    return (db.prepare(`SELECT name FROM ${MIGRATION_TABLE} ORDER BY name`).pluck().all() as string[]);
  } catch {
    throw new BackupError(`${file} is not a paygate database (it has no migrations table)`);
  }
}

/** Removes a database's side files; a stale WAL beside another database would be replayed into it. */
function removeSideFiles(file: string): void {
  for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${file}${suffix}`, { force: true });
}

/**
 * Checks a database file: `PRAGMA integrity_check` answers ok and it is a paygate
 * schema; returns its migrations. The file is left a single self-contained file
 * (rollback journal mode, no -wal beside it), which is how backups are kept.
 */
export function verifyDatabaseFile(file: string): string[] {
  let db: BetterSqlite3.Database;
  try {
    db = open(file, { fileMustExist: true });
  } catch {
    throw new BackupError(`${file} cannot be opened as a database`);
  }
  try {
    db.pragma("journal_mode = DELETE");
    const result = db.pragma("integrity_check", { simple: false }) as Array<{ integrity_check: string }>;
    const problems = result.map((r) => r.integrity_check).filter((line) => line !== "ok");
    if (problems.length > 0) throw new BackupError(`${file} fails PRAGMA integrity_check: ${problems.slice(0, 3).join("; ")}`);
    return migrationsOf(db, file);
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} is not a readable database (${(error as { code?: string }).code ?? "unknown error"})`);
  } finally {
    db.close();
  }
}

export interface BackupReport {
  file: string;
  bytes: number;
  migrations: string[];
}

/**
 * Copies the data dir's database to `target` with SQLite's online backup API while
 * servers keep writing: the copy is one consistent snapshot. It is written under a
 * temporary name beside `target` (mode 0600), verified, fsynced, then renamed, so
 * `target` is only ever a complete, checked backup.
 */
export async function backupDatabase(dataDir: string, target: string): Promise<BackupReport> {
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) throw new BackupError(`no paygate database at ${source} (check --data / PAYGATE_DATA_DIR)`);
  const partial = join(dirname(target), `.${basename(target)}.${process.pid}.tmp`);
  try {
    closeSync(openSync(partial, "wx", 0o600));
  } catch (error) {
    throw new BackupError(`cannot write beside ${target} (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    const db = open(source, { fileMustExist: true });
    let expected: string[];
    try {
      db.pragma("busy_timeout = 5000");
      expected = migrationsOf(db, source);
      // All remaining pages in each step: a write by a server restarts the copy at most
      // once per step instead of after every 100 pages.
      await db.backup(partial, { progress: ({ remainingPages }) => Math.max(remainingPages, 100) });
    } finally {
      db.close();
    }
    const migrations = verifyDatabaseFile(partial);
    if (migrations.join() !== expected.join()) throw new BackupError(`the copy's migrations (${migrations.join(", ")}) differ from ${source}'s (${expected.join(", ")})`);
    chmodSync(partial, 0o600);
    fsyncPath(partial);
    renameSync(partial, target);
    fsyncPath(dirname(target));
    return { file: target, bytes: statSync(target).size, migrations };
  } finally {
    rmSync(partial, { force: true });
    removeSideFiles(partial);
  }
}

/** Copies a backup with SQLite (not byte by byte), so a file that is not a database is named as such. */
async function copyDatabase(backup: string, partial: string): Promise<void> {
  let source: BetterSqlite3.Database | undefined;
  try {
    source = open(backup, { readonly: true, fileMustExist: true });
    await source.backup(partial);
  } catch (error) {
    throw new BackupError(`${backup} cannot be read as a database (${(error as { code?: string }).code ?? "unknown error"})`);
  } finally {
    source?.close();
  }
}

/** Refuses a backup written by a newer paygate, whose schema this one does not know. */
async function assertKnownMigrations(file: string, migrations: string[]): Promise<void> {
  const known = Object.keys(await migrationProvider.getMigrations());
  const unknown = migrations.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new BackupError(`${file} has migrations this paygate does not know (${unknown.join(", ")}): restore it with the version that wrote it`);
}

/**
 * Replaces (or creates) the data dir's database with a backup. The backup is copied
 * beside the target and verified there before anything of the target is touched; it
 * then replaces the target in one rename, after the target's -wal/-shm are removed,
 * while this process holds the old database exclusively, so a server that has it open
 * is detected (StoreInUseError) and none can open it meanwhile.
 */
export async function restoreDatabase(backup: string, dataDir: string, options: { force?: boolean } = {}): Promise<BackupReport> {
  if (!existsSync(backup)) throw new BackupError(`no backup at ${backup}`);
  const target = join(dataDir, DATABASE_FILE);
  const exists = existsSync(target);
  if (exists && !options.force) throw new BackupError(`${target} already exists: restoring would replace it; add --force to replace it`);
  if (!existsSync(dataDir)) throw new BackupError(`the data directory ${dataDir} does not exist (create it, mode 0700)`);
  const partial = join(dataDir, `.${DATABASE_FILE}.restore-${process.pid}.tmp`);
  let held: BetterSqlite3.Database | undefined;
  try {
    await copyDatabase(backup, partial);
    chmodSync(partial, 0o600);
    const migrations = verifyDatabaseFile(partial);
    await assertKnownMigrations(backup, migrations);
    fsyncPath(partial);
    if (exists) held = holdExclusively(target);
    removeSideFiles(target);
    renameSync(partial, target);
    fsyncPath(dataDir);
    return { file: target, bytes: statSync(target).size, migrations };
  } finally {
    held?.close();
    rmSync(partial, { force: true });
    removeSideFiles(partial);
  }
}

/**
 * Opens `file` so that no other connection can have it: fails with StoreInUseError
 * when one does. The database is switched out of WAL mode while held, so closing this
 * connection later touches no -wal file by name (the new database's, by then).
 */
function holdExclusively(file: string): BetterSqlite3.Database {
  const db = open(file, { fileMustExist: true });
  lockExclusively(db, file);
  try {
    db.pragma("journal_mode = DELETE");
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
