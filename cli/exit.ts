import { ConfigError } from "../server/config";
import { ApiError } from "../server/errors";
import { StoreError } from "../store/database";
import { DatabaseUnavailableError, isLockTimeout, postgresConnectionProblem } from "../store/db-errors";
import { WrongMasterKeyError } from "../server/secrets/cipher";

/** Exit codes of every command (CONTRACT §9). */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A bad invocation the user can fix (exit 2). */
export class UsageError extends Error {}

/**
 * Prints a failed command's one-line reason on stderr and sets the exit code. Only
 * known errors print their message; anything else may carry internals and is reduced
 * to a generic line.
 */
export function fail(error: unknown): void {
  if (error instanceof UsageError) {
    process.stderr.write(`paygate: ${error.message}\n`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  if (isLockTimeout(error)) {
    process.stderr.write("paygate: the database stayed locked by another process (a server or another command) for longer than PAYGATE_BUSY_TIMEOUT (default 5s); try again\n");
    process.exitCode = EXIT_FAILED;
    return;
  }
  const unusable = postgresConnectionProblem(error);
  if (unusable) {
    process.stderr.write(`paygate: ${unusable}\n`);
    process.exitCode = EXIT_FAILED;
    return;
  }
  const known = error instanceof ApiError || error instanceof ConfigError || error instanceof WrongMasterKeyError || error instanceof StoreError || error instanceof DatabaseUnavailableError || (error instanceof Error && error.name === "OperationError");
  const message = known ? (error as Error).message : `unexpected error${error instanceof Error && "code" in error ? ` (${String(error.code)})` : ""}`;
  process.stderr.write(`paygate: ${message}\n`);
  process.exitCode = EXIT_FAILED;
}

/** A failure the CLI reports as-is (exit 1). */
export class OperationError extends Error {
  override name = "OperationError";
}
