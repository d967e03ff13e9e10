import type { Kysely, Migration } from "kysely";

/**
 * The audit log: append-only, written in the same transaction as the change it
 * records. No foreign key to merchants, so a record outlives what it names.
 */
export const auditLogMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("audit_log")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("actor_type", "text", (c) => c.notNull())
      .addColumn("actor_id", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("target_type", "text", (c) => c.notNull())
      .addColumn("target_id", "text", (c) => c.notNull())
      .addColumn("merchant_id", "text")
      .addColumn("details", "text")
      .execute();
    await db.schema.createIndex("audit_log_time").on("audit_log").columns(["created_at", "id"]).execute();
    await db.schema.createIndex("audit_log_merchant").on("audit_log").columns(["merchant_id", "created_at"]).execute();
  },
};
