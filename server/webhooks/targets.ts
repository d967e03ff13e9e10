import type { Db } from "../../store/database";
import type { ProductionRule } from "../production-rule";
import type { SelfAddress, TargetRules } from "./url-policy";

/** Where the rules for a webhook target come from, read when a target is saved or connected to. */
export interface TargetSource {
  /** The rules now, the database's production mark read afresh (`db`: a transaction to read it in). */
  current(db?: Db): Promise<TargetRules>;
}

/**
 * This process's limits on webhook targets beyond each mode's own: paygate's own
 * address once it listens (never in the CLI), and loopback when production, which
 * another process may have made the database since this one started.
 *
 * @example
 * const url = checkEndpointUrl(raw, mode, await app.targets.current(trx));
 */
export class WebhookTargets implements TargetSource {
  /** Set once the server listens. */
  self: SelfAddress | undefined;
  private snapshot: TargetRules = { refuseLoopback: false };

  constructor(readonly production: ProductionRule) {}

  /**
   * The rules as this process knows them, without a database read: what each delivery
   * is checked against. Each new connection reads `current` (server/webhooks/send.ts).
   */
  known(): TargetRules {
    if (this.snapshot.self !== this.self || this.snapshot.refuseLoopback !== this.production.known) {
      this.snapshot = { self: this.self, refuseLoopback: this.production.known };
    }
    return this.snapshot;
  }

  async current(db?: Db): Promise<TargetRules> {
    await this.production.check(db);
    return this.known();
  }
}
