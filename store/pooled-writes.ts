import type { Db, Trx, Writes } from "./database";
import { isWriteConflict } from "./db-errors";
import { markSettingsChanged, settingsGeneration } from "./settings-changes";

/** A deadlock victim is retried this many times before its error is the answer. */
const MAX_ATTEMPTS = 3;

/**
 * PostgreSQL's committer: one transaction per unit of work, on a connection from the
 * pool, so units commit in parallel. A unit chosen as a deadlock (or serialization)
 * victim was rolled back whole by the server and is run again: a unit reads and writes
 * only through its transaction, so running it again is the same as running it once.
 */
export class PooledWrites implements Writes {
  /** `onBatch` hears 1 per commit: each transaction carries one unit. */
  constructor(
    private readonly db: Db,
    private readonly onBatch?: (size: number) => void,
  ) {}

  async run<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    const settingsBefore = settingsGeneration();
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          const result = await this.db.transaction().execute(fn);
          this.onBatch?.(1);
          return result;
        } catch (error) {
          if (attempt >= MAX_ATTEMPTS || !isWriteConflict(error)) throw error;
        }
      }
    } finally {
      // Settings another connection read while this unit was open are the old ones: once
      // it is settled, marked again so that nothing read meanwhile is kept.
      if (settingsGeneration() !== settingsBefore) markSettingsChanged();
    }
  }
}
