import { Migrator, type Kysely, type Transaction } from "kysely";
import { migrationProvider } from "./migrations";
import type { Database } from "./schema";

/** A query executor: the database itself or an open transaction. */
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;

export const DATABASE_FILE = "paygate.db";

export type Engine = "sqlite" | "postgres";

/**
 * How transactional writes are committed: each `run` is one unit of work, durable
 * when its promise resolves. SQLite groups concurrent units into one commit
 * (store/group-commit.ts); PostgreSQL gives each its own transaction from the pool.
 */
export interface Writes {
  run<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
}

export interface Store {
  readonly engine: Engine;
  readonly db: Db;
  /** Where the data lives, for operators: the database file, or the URL without its password. */
  readonly location: string;
  /**
   * Changes whenever another process (a second server, the CLI) may have changed API
   * keys or merchants; caches compare it to know they are stale. It never moves
   * backwards.
   */
  dataVersion(): number;
  /** Whether the database this process writes to is still the one it opened (SQLite: the file on disk). */
  isInPlace(): boolean;
  /** The committer for this engine; `onBatch` hears how many units each commit carried. */
  createWrites(onBatch?: (size: number) => void): Writes;
  close(): Promise<void>;
}

/** Connections in the PostgreSQL pool when PAYGATE_DATABASE_POOL_SIZE is not set. */
export const DEFAULT_POOL_SIZE = 10;

/** Where the store is: the data dir (SQLite) unless a PostgreSQL URL is given. */
export interface StoreLocation {
  dataDir: string;
  databaseUrl?: string | undefined;
  /** Connections in the PostgreSQL pool. */
  databasePoolSize?: number;
}

export interface OpenOptions {
  /**
   * How long a write waits for another process's lock before failing (SQLITE_BUSY;
   * PostgreSQL's lock_timeout). @default 5000
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

/** Where the data dir comes from, named in every error about it. */
export const DATA_DIR_SETTING = "--data / PAYGATE_DATA_DIR";

/** The data dir or its database cannot be used; the message names the path and the setting. */
export class StoreError extends Error {
  override name = "StoreError";
}

/** Applies every pending migration; returns the names applied now. */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
