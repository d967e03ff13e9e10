import type { Db, Trx } from "../store/database";

/**
 * How a service commits its writes. A service puts a state change, its events and
 * everything else that must be atomic into one `commit`; the HTTP front door's unit
 * also writes the idempotency record into that same transaction, the CLI's does not.
 */
export interface UnitOfWork {
  commit<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
}

/** A plain transaction per commit: the CLI's unit, and the base of the HTTP one. */
export function transactionUnit(db: Db): UnitOfWork {
  return { commit: (fn) => db.transaction().execute(fn) };
}
