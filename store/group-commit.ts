import { CompiledQuery } from "kysely";
import type { Db, Trx, Writes } from "./database";
import { markSettingsChanged, settingsGeneration } from "./settings-changes";

interface Pending {
  fn: (trx: Trx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

// Issued on the group's transaction as they are: kysely's savepoint API builds a new
// transaction object for each, a measurable cost with one savepoint per write.
const SAVEPOINT = CompiledQuery.raw('savepoint "item"');
const RELEASE = CompiledQuery.raw('release "item"');
const ROLLBACK_TO = CompiledQuery.raw('rollback to "item"');

/** Upper bound of one group, so one commit never holds the database for long. */
const MAX_GROUP = 256;

/**
 * Group commit: writes that arrive together share one transaction and one fsync.
 * Each write runs in its own savepoint, so one that fails is rolled back alone;
 * every write's promise settles only after the group's COMMIT returned, i.e. once it
 * is durable (`synchronous=FULL`). With one writer at a time this is one transaction
 * per write, as before; under load, one fsync carries many requests.
 */
export class GroupCommit implements Writes {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;

  /** `onBatch` hears each committed group's size (metrics). */
  constructor(
    private readonly db: Db,
    private readonly onBatch?: (size: number) => void,
  ) {}

  run<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every request that is ready in this turn of the loop join.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const settingsBefore = settingsGeneration();
    const group = this.queue.splice(0, MAX_GROUP);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      const trx = await this.db.startTransaction().execute();
      try {
        for (const item of group) {
          await trx.executeQuery(SAVEPOINT);
          try {
            outcomes.push({ ok: true, value: await item.fn(trx) });
            await trx.executeQuery(RELEASE);
          } catch (error) {
            outcomes.push({ ok: false, error });
            await trx.executeQuery(ROLLBACK_TO);
            await trx.executeQuery(RELEASE);
          }
        }
        await trx.commit().execute();
        this.onBatch?.(group.length);
      } catch (error) {
        await trx.rollback().execute().catch(() => undefined);
        throw error;
      }
      group.forEach((item, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) item.resolve(outcome.value);
        else item.reject(outcome?.error);
      });
    } catch (error) {
      // The group did not commit: nothing of it is durable.
      for (const item of group) item.reject(error);
    } finally {
      // Settings read while this group was open may hold its uncommitted (or rolled back)
      // writes: marked again now that it is settled, so nothing read meanwhile is kept.
      if (settingsGeneration() !== settingsBefore) markSettingsChanged();
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
