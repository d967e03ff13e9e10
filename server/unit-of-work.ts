import type { Trx, Writes } from "../store/database";


/**
 * How a service commits its writes. A service puts a state change, its events and
 * everything else that must be atomic into one `commit`; the HTTP front door's unit
 * also writes the idempotency record into that same transaction, the CLI's does not.
 */
export interface UnitOfWork {
  commit<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
}

/** Commits through the group committer, without an idempotency record (CLI, GET/PUT routes). */
export function writeUnit(writes: Writes): UnitOfWork {
  return { commit: (fn) => writes.run(fn) };
}
