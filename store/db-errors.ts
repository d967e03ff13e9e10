/**
 * What a database error means, read from its error code (and, for PostgreSQL, the
 * fields the server sends), never from message wording alone.
 */

/** A unique or primary-key constraint that a write violated. */
export interface UniqueViolation {
  table: string;
  columns: string[];
  /** The constraint's name; PostgreSQL reports it, SQLite does not. */
  constraint?: string;
}

const SQLITE_UNIQUE_CODES = new Set(["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);
const POSTGRES_UNIQUE_VIOLATION = "23505";

interface DriverError {
  code?: unknown;
  message?: unknown;
  table?: unknown;
  constraint?: unknown;
  detail?: unknown;
}

/**
 * The violated unique constraint, or undefined for any other error. SQLite
 * (better-sqlite3) names no constraint: once the code says it is a unique violation,
 * the table and columns come from the fixed `<table>.<column>, …` list it appends.
 * PostgreSQL (SQLSTATE 23505) sends the table and constraint as fields and the
 * columns in `detail` (`Key (a, b)=(…) already exists.`).
 */
export function uniqueViolation(error: unknown): UniqueViolation | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message, table, constraint, detail } = error as DriverError;
  if (typeof code === "string" && SQLITE_UNIQUE_CODES.has(code) && typeof message === "string") {
    const qualified = /: ((?:[\w]+\.[\w]+)(?:, [\w]+\.[\w]+)*)$/.exec(message)?.[1];
    if (!qualified) return undefined;
    const pairs = qualified.split(", ").map((pair) => pair.split(".") as [string, string]);
    return { table: pairs[0]?.[0] as string, columns: pairs.map(([, column]) => column) };
  }
  if (code === POSTGRES_UNIQUE_VIOLATION && typeof table === "string") {
    const list = typeof detail === "string" ? /^Key \(([^)]*)\)=/.exec(detail)?.[1] : undefined;
    return {
      table,
      columns: list ? list.split(",").map((column) => column.trim().replace(/^"|"$/g, "")) : [],
      ...(typeof constraint === "string" && { constraint }),
    };
  }
  return undefined;
}

/** Whether `error` violated the unique constraint on exactly these columns of `table`. */
export function violatesUnique(error: unknown, table: string, columns: readonly string[]): boolean {
  const violation = uniqueViolation(error);
  if (violation?.table !== table || violation.columns.length !== columns.length) return false;
  return columns.every((column) => violation.columns.includes(column));
}

/**
 * Whether another process held the write lock for longer than the busy timeout
 * (SQLite's SQLITE_BUSY family; PostgreSQL's lock_not_available, 55P03).
 */
export function isLockTimeout(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as DriverError).code : undefined;
  return typeof code === "string" && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "55P03");
}

/** PostgreSQL's serialization_failure and deadlock_detected: the server rolled the transaction back. */
const POSTGRES_WRITE_CONFLICTS = new Set(["40001", "40P01"]);

/** Whether the database rolled a transaction back because of a concurrent one; running it again may succeed. */
export function isWriteConflict(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as DriverError).code : undefined;
  return typeof code === "string" && POSTGRES_WRITE_CONFLICTS.has(code);
}

/** The database cannot be reached (down, restarting, connection dropped); the request may be retried later. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  constructor(override readonly cause: unknown) {
    super("the database is unavailable");
  }
}

/**
 * SQLSTATE classes that mean the server cannot serve this connection: 08 (connection
 * exception), 57P01-57P03 (shutting down, crashed, starting up), 53300 (too many
 * connections).
 */
const POSTGRES_UNAVAILABLE = /^(08...|57P0[123]|53300)$/;
const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * Whether a PostgreSQL driver error means the connection is lost rather than that the
 * statement failed. Statement errors are the server's, and always carry a SQLSTATE of
 * five characters; `pg` raises connection losses (terminated, connect timeout) as
 * errors with no code at all.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === undefined) return true;
  return typeof code === "string" && (SOCKET_ERRORS.has(code) || POSTGRES_UNAVAILABLE.test(code));
}

/** Whether a request failed only because the database could not take it now: unreachable, locked, or a conflict that outlived its retries. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return error instanceof DatabaseUnavailableError || isLockTimeout(error) || isWriteConflict(error);
}

/** Socket failures reaching PostgreSQL, in the operator's words. */
const UNREACHABLE_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/** SQLSTATEs PostgreSQL answers a connection attempt with when the URL names no usable database or login. */
const CONNECTION_REFUSALS = new Set(["3D000", "28000", "28P01"]);

/**
 * One line for an operator when PostgreSQL could not be used at all: unreachable (with
 * the address the driver tried), or the server refused the database or the login. The
 * server's message for those refusals names only the database or role, no secret.
 * Undefined for anything else.
 */
export function postgresConnectionProblem(error: unknown): string | undefined {
  if (error instanceof DatabaseUnavailableError) {
    const { code, address, port } = (error.cause ?? {}) as { code?: unknown; address?: unknown; port?: unknown };
    const where = typeof address === "string" ? ` at ${address}${typeof port === "number" ? `:${port}` : ""}` : "";
    const reason = (typeof code === "string" && UNREACHABLE_REASONS[code]) || "no connection could be made or kept";
    return `cannot reach the PostgreSQL database${where} (PAYGATE_DATABASE_URL): ${reason}`;
  }
  const { code, message } = (typeof error === "object" && error !== null ? error : {}) as DriverError;
  if (typeof code === "string" && CONNECTION_REFUSALS.has(code) && typeof message === "string") {
    return `PostgreSQL refused the connection (PAYGATE_DATABASE_URL): ${message}`;
  }
  return undefined;
}
