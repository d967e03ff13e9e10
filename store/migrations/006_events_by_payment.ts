import type { Kysely, Migration } from "kysely";

/**
 * A payment's events by id: each new event of a payment reads the last one to sort
 * after it, whichever process wrote it (server/events/record-event.ts).
 */
export const eventsByPaymentMigration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.createIndex("events_payment").on("events").columns(["payment_id", "id"]).execute();
  },
};
