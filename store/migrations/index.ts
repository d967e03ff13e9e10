import type { Migration, MigrationProvider } from "kysely";
import { initMigration } from "./001_init";
import { followOnClaimsMigration } from "./002_follow_on_claims";
import { scrubUnkeyedFingerprintsMigration } from "./003_scrub_unkeyed_fingerprints";
import { auditLogMigration } from "./004_audit_log";
import { changeSignalMigration } from "./005_change_signal";
import { eventsByPaymentMigration } from "./006_events_by_payment";
import { dashboardSessionsMigration } from "./007_dashboard_sessions";
import { dashboardChosenMerchantMigration } from "./008_dashboard_chosen_merchant";
import { auditModeMigration } from "./009_audit_mode";

/**
 * Every migration, in order. Listed statically (not read from a folder) so they are
 * bundled into the single executable.
 */
const MIGRATIONS: Record<string, Migration> = {
  "001_init": initMigration,
  "002_follow_on_claims": followOnClaimsMigration,
  "003_scrub_unkeyed_fingerprints": scrubUnkeyedFingerprintsMigration,
  "004_audit_log": auditLogMigration,
  "005_change_signal": changeSignalMigration,
  "006_events_by_payment": eventsByPaymentMigration,
  "007_dashboard_sessions": dashboardSessionsMigration,
  "008_dashboard_chosen_merchant": dashboardChosenMerchantMigration,
  "009_audit_mode": auditModeMigration,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return MIGRATIONS;
  },
};
