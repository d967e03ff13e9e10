import type { Kysely, Migration } from "kysely";

/**
 * The merchant an admin session chose in the dashboard's switcher. Kept in the session
 * row so every instance sharing the database acts on the same choice; empty means the
 * admin key's own merchant.
 */
export const dashboardChosenMerchantMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("dashboard_sessions").addColumn("chosen_merchant_id", "text").execute();
  },
};
