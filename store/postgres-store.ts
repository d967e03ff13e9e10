import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";
import type { OpenOptions, Store } from "./database";
import { DatabaseUnavailableError, isConnectionLoss } from "./db-errors";
import { PostgresChangeSignal } from "./postgres-change-signal";
import { PooledWrites } from "./pooled-writes";
import type { Database } from "./schema";

/** PostgreSQL type ids whose text form `pg` would hand over as strings. */
const INT8 = 20;
const NUMERIC = 1700;

/**
 * bigint (millisecond timestamps, counts) and numeric (sums) arrive as strings by
 * default; paygate's values fit a JavaScript number exactly, so they are numbers here,
 * once, for this pool only.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/** How long a request waits for a pool connection (or a new one) before it is told the database is unavailable. */
const CONNECT_TIMEOUT_MS = 5_000;

/** The URL as an operator may see it: no password. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

/**
 * A lost connection surfaces from `pg` as plain Errors without a code ("Connection
 * terminated unexpectedly", a connect timeout) or as socket errors; they are turned
 * into one `DatabaseUnavailableError` here, so the rest of paygate reads a type, not
 * wording.
 */
function unavailableIfLost(error: unknown): unknown {
  return isConnectionLoss(error) ? new DatabaseUnavailableError(error) : error;
}

function guardedPool(pool: pg.Pool): PostgresPool {
  const guarded = new WeakSet<pg.PoolClient>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect().catch((error: unknown) => {
        throw unavailableIfLost(error);
      });
      // A checked-out connection that the server drops between two statements emits
      // "error" on itself, not on the pool: unheard, it would end the process. The
      // statement that follows fails, and the pool replaces the connection.
      if (!guarded.has(client)) {
        guarded.add(client);
        client.on("error", () => undefined);
      }
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      return {
        query: (...args: unknown[]) => {
          const result = query(...args);
          return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(unavailableIfLost(error))) : result;
        },
        release: () => client.release(),
      } as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/**
 * Opens a pool on the PostgreSQL database at `url`. Every connection commits durably
 * (`synchronous_commit=on`, whatever the server's default) and waits at most
 * `busyTimeoutMs` for a row lock (`lock_timeout`), as SQLite waits for its write lock.
 */
export function openPostgresStore(url: string, poolSize: number, options: OpenOptions = {}): Store {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    types,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    options: `-c synchronous_commit=on -c lock_timeout=${options.busyTimeoutMs ?? 5000}`,
  });
  // An idle connection that the server drops (restart, failover) must not crash the
  // process: the pool discards it and the next checkout opens a new one.
  pool.on("error", () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }) });
  const changes = new PostgresChangeSignal(url, db);
  return {
    engine: "postgres",
    db,
    location: redactedUrl(url),
    dataVersion: () => changes.version(),
    createWrites: (onBatch) => new PooledWrites(db, onBatch),
    isInPlace: () => true,
    async close() {
      await changes.close();
      await db.destroy();
    },
  };
}
