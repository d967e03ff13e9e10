import type { Cache } from "./cache/cache";
import type { SettingsCache } from "./cache/settings-cache";
import type { Config } from "./config";
import type { Logger } from "./logger";
import type { Metrics } from "./metrics/metrics";
import type { Db, Store, Writes } from "../store/database";
import type { Instances } from "./jobs/instance-heartbeat";
import type { Authenticator } from "./keys/authenticator";
import type { Cipher } from "./secrets/cipher";
import type { WebhookDelivery } from "./webhooks/service";
import type { ProductionRule } from "./production-rule";
import type { WebhookTargets } from "./webhooks/targets";

/** The dependencies every service and route receives; built once per process. */
export interface AppContext {
  config: Config;
  store: Store;
  db: Db;
  /** Every transactional write goes through here (SQLite: concurrent writes share one fsync). */
  writes: Writes;
  cache: Cache;
  /** Accounts, routing, credentials and webhook endpoints as charges read them, kept while unchanged. */
  settings: SettingsCache;
  log: Logger;
  /** The per-request line (server/http/pipeline.ts). */
  requestLog: Logger;
  auth: Authenticator;
  /** Encrypts what paygate must be able to read back: secrets, card numbers, webhook secrets. */
  cipher: Cipher;
  /** Keys the idempotency fingerprints (server/http/idempotency.ts); derived from the master key. */
  fingerprintKey: Buffer;
  /** Whether the production rules apply: this process's config, or its database's mark. */
  production: ProductionRule;
  /**
   * Limits on webhook targets: where this process serves HTTP, once listening (never
   * in the CLI), and loopback when production.
   */
  targets: WebhookTargets;
  /** Webhook sending; a no-op in the CLI. */
  webhooks: WebhookDelivery;
  /** The serving processes on this database (server/jobs/instance-heartbeat.ts); one in the CLI. */
  instances: Instances;
  /** Prometheus metrics of this process (server/metrics). */
  metrics: Metrics;
  /** Run in order at shutdown, before the store closes (flush batches, stop timers). */
  closers: Array<() => Promise<void>>;
}

declare global {
  /** Replaced at build time (tsup/vitest `define`) with package.json's version. */
  const PAYGATE_VERSION: string;
}

export const VERSION: string = PAYGATE_VERSION;
