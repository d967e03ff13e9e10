import BetterSqlite3 from "better-sqlite3";
import { Kysely } from "kysely";
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR_SETTING, DATABASE_FILE, StoreError, StoreInUseError, type OpenOptions, type Store } from "./database";
import { isLockTimeout } from "./db-errors";
import { GroupCommit } from "./group-commit";
import { ImmediateSqliteDialect } from "./immediate-dialect";
import { nativeBinding } from "./native-binding";
import type { Database } from "./schema";

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

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EEXIST" || code === "ENOTDIR") return "it is not a directory";
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return "permission denied";
  if (code === "SQLITE_CANTOPEN") return "the database file cannot be opened (permissions, or not a file)";
  if (code === "SQLITE_READONLY") return "the database is read-only";
  if (code === "SQLITE_NOTADB") return "the file is not a SQLite database";
  return code ? `${code}` : error instanceof Error ? error.message : String(error);
}

/**
 * SQLite's own page cache, per connection. better-sqlite3 sets 16 MiB, which fills
 * under load and was the largest part of the server's growth past 150 MB RSS; the
 * operating system caches the file anyway, so a page missing here is one read from
 * memory. Measured with scripts/bench/rss.mjs on the executable: peak 158-162 -> 138-149 MB,
 * sale throughput unchanged.
 */
const PAGE_CACHE_KIB = 4096;

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
export function openSqliteStore(dataDir: string, options: OpenOptions = {}): Store {
  const file = join(dataDir, DATABASE_FILE);
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StoreError(`cannot use the data directory ${dataDir} (set by ${DATA_DIR_SETTING}): ${reason(error)}`);
  }
  try {
    // SQLite gives the -wal and -shm files the database file's mode: card data, key
    // hashes and stored answers are for this user only, whatever the umask.
    if (!existsSync(file)) closeSync(openSync(file, "a", 0o600));
    sqlite = new BetterSqlite3(file, { nativeBinding: nativeBinding() as string });
    if (options.exclusive) lockExclusively(sqlite, file);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = FULL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  } catch (error) {
    sqlite?.close();
    if (isLockTimeout(error) || error instanceof StoreInUseError) throw error;
    throw new StoreError(`cannot open the database ${file} (data directory set by ${DATA_DIR_SETTING}): ${reason(error)}`);
  }
  const inode = statSync(file).ino;
  // Prepared before the cache: pluck() changes the statement, which must not be shared.
  const dataVersionStatement = sqlite.prepare("PRAGMA data_version").pluck();
  cacheStatements(sqlite);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: sqlite }) });
  return {
    engine: "sqlite",
    db,
    location: file,
    // SQLite's `PRAGMA data_version` moves whenever another connection commits.
    dataVersion: () => dataVersionStatement.get() as number,
    createWrites: (onBatch) => new GroupCommit(db, onBatch),
    isInPlace() {
      try {
        return statSync(file).ino === inode;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

