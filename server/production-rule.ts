import type { Db } from "../store/database";
import { isMarkedProduction, markProduction } from "../store/production-mark";
import type { Logger } from "./logger";

/**
 * Whether this process follows the production rules: development mode refused, and
 * test-mode webhooks refused on loopback (the operator's machine, not a merchant's).
 * Production belongs to the database, not to the process: a server configured
 * production (PAYGATE_ENV / NODE_ENV) marks the database it serves, for good, and
 * every process on it (a second server, the CLI, an instance elsewhere) follows the
 * rules whatever its own environment says.
 *
 * A process only ever goes from "not production" to "production", so a "yes" is
 * remembered and a "no" is asked of the database again: `check` before each endpoint
 * save and each new webhook connection.
 *
 * @example
 * const production = new ProductionRule(store.db, config.environment === "production");
 * if (await production.check(trx)) refuseLoopback();
 */
export class ProductionRule {
  private production: boolean;
  private readonly learners: Array<() => void> = [];

  constructor(
    private readonly db: Db,
    /** The process's own config says production. */
    readonly configured: boolean,
  ) {
    this.production = configured;
  }

  /** What this process knows without asking the database. */
  get known(): boolean {
    return this.production;
  }

  /** Whether the rules apply now: the config, a mark seen before, or the mark read now (`db`: a transaction to read it in). */
  async check(db: Db = this.db): Promise<boolean> {
    if (!this.production && (await isMarkedProduction(db))) {
      this.production = true;
      for (const learned of this.learners.splice(0)) learned();
    }
    return this.production;
  }

  /** Runs `listener` once, when this process learns of a mark another process wrote since it started. */
  onLearned(listener: () => void): void {
    if (!this.production) this.learners.push(listener);
  }

  /**
   * At a server's start: a production server marks its database; a server that finds
   * the mark without being configured production says, once, that it follows it.
   */
  async openForServing(log: Logger): Promise<void> {
    if (this.configured) return markProduction(this.db);
    if (await this.check()) log.warn(MARKED_WARNING);
  }
}

const MARKED_WARNING =
  "this database is marked production (a server with PAYGATE_ENV=production served it): the production rules apply although this process's PAYGATE_ENV / NODE_ENV is not production (no development mode; test-mode webhooks may not target loopback). The mark is permanent.";
