import type { Kysely, Migration } from "kysely";

/**
 * What must hold across processes and restarts, kept in the database rather than in
 * process memory: the claim a follow-on takes on its payment before the processor is
 * asked, and the processor references whose outcome is unknown (TSYS has no
 * idempotency key, so an unanswered reference must never be re-sent).
 */
export const followOnClaimsMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("payments").addColumn("pending_operation", "text").execute();
    await db.schema.alterTable("payments").addColumn("pending_amount", "integer").execute();
    await db.schema.alterTable("payments").addColumn("pending_request", "text").execute();
    await db.schema.alterTable("payments").addColumn("pending_until", "bigint").execute();
    await db.schema.alterTable("payments").addColumn("pending_in_doubt", "integer", (c) => c.notNull().defaultTo(0)).execute();

    await db.schema
      .createTable("in_doubt_references")
      .addColumn("connector_id", "text", (c) => c.notNull())
      .addColumn("reference", "text", (c) => c.notNull())
      .addColumn("expires_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("in_doubt_references_pk", ["connector_id", "reference"])
      .execute();
  },
};
