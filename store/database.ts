import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, type Transaction } from "kysely";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ImmediateSqliteDialect } from "./immediate-dialect";
import { migrationProvider } from "./migrations";
import { nativeBinding } from "./native-binding";
import type { Database } from "./schema";

/** A query executor: the database itself or an open transaction. */
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;

export const DATABASE_FILE = "paygate.db";

export interface Store {
  readonly db: Db;
  readonly file: string;
  /**
   * SQLite's `PRAGMA data_version`: changes whenever another connection (another
   * process, such as the CLI) commits. Caches compare it to know they are stale.
   */
  dataVersion(): number;
  /** Whether the database file on disk is still the one this process writes to. */
  fileIsPresent(): boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * How long a statement waits for another process's lock before failing
   * (SQLITE_BUSY). Every transaction takes the write lock at BEGIN, so this covers
   * every write. @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Take the database for this connection alone (SQLite's exclusive locking mode) and
   * fail at once with `StoreInUseError` when any other connection, such as a running
   * server, has it open. The lock is held until `close()`.
   */
  exclusive?: boolean;
}

/** Another connection (a server, another command) has the database open. */
export class StoreInUseError extends Error {
  constructor(readonly file: string) {
    super(`${file} is open in another process (a running server or another paygate command): stop it first`);
    this.name = "StoreInUseError";
  }
}

/**
 * In exclusive locking mode the first write lock is kept until the connection closes;
 * taking it with no busy wait fails while any other connection holds even a read lock
 * or the WAL's shared-memory lock, which every open connection does.
 */
export function lockExclusively(sqlite: BetterSqlite3.Database, file: string): void {
  sqlite.pragma("locking_mode = EXCLUSIVE");
  sqlite.pragma("busy_timeout = 0");
  try {
    sqlite.exec("BEGIN EXCLUSIVE");
    sqlite.exec("COMMIT");
  } catch (error) {
    sqlite.close();
    if ((error as { code?: string }).code === "SQLITE_BUSY") throw new StoreInUseError(file);
    throw error;
  }
}

/** Distinct SQL texts kept prepared; paygate issues far fewer, so this only bounds a leak. */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * kysely's SQLite driver prepares every query anew, which was the largest single
 * CPU cost per request. better-sqlite3 statements are reusable (and recompile
 * themselves after a schema change), so each SQL text is prepared once.
 */
function cacheStatements(sqlite: BetterSqlite3.Database): void {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      statement = prepare(source);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof sqlite.prepare;
}

/**
 * Opens (creating if needed) `paygate.db` in `dataDir` with the durability settings
 * paygate relies on: WAL journal, `synchronous=FULL` (a commit is on disk before it is
 * acknowledged), foreign keys, and a busy timeout for the CLI and server sharing it.
 */
export function openStore(dataDir: string, options: OpenOptions = {}): Store {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, DATABASE_FILE);
  const sqlite = new BetterSqlite3(file, { nativeBinding: nativeBinding() as string });
  if (options.exclusive) lockExclusively(sqlite, file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = FULL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  const inode = statSync(file).ino;
  // Prepared before the cache: pluck() changes the statement, which must not be shared.
  const dataVersionStatement = sqlite.prepare("PRAGMA data_version").pluck();
  cacheStatements(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });
  return {
    db,
    file,
    dataVersion: () => dataVersionStatement.get() as number,
    fileIsPresent() {
      try {
        return statSync(file).ino === inode;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

/** Applies every pending migration; returns the names applied now. */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
