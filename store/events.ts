import { sql, type Insertable } from "kysely";
import { compiled } from "./compiled-query";
import type { Db } from "./database";
import type { EventRow, EventsTable } from "./schema";
import { olderThan } from "./keyset";

/** Whose data a query may see: a merchant in one mode (test and live never mix). */
export interface Owner {
  merchantId: string;
  mode: EventsTable["mode"];
}

export async function findEvent(db: Db, id: string): Promise<EventRow | undefined> {
  return db.selectFrom("events").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function findOwnedEvent(db: Db, owner: Owner, id: string): Promise<EventRow | undefined> {
  return db
    .selectFrom("events")
    .selectAll()
    .where("id", "=", id)
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .executeTakeFirst();
}

/** Newest first, `limit + 1` rows so the caller can tell `has_more`. */
export async function listEvents(db: Db, owner: Owner, limit: number, options: { after?: EventRow; type?: string }): Promise<EventRow[]> {
  let query = db
    .selectFrom("events")
    .selectAll()
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1);
  if (options.type !== undefined) query = query.where("type", "=", options.type);
  const after = options.after;
  if (after) {
    query = query.where(olderThan(after));
  }
  return query.execute();
}

// A literal LIMIT: SQLite plans `LIMIT ?` into a statement about four times slower here.
const lastEventQuery = compiled((db, paymentId: string) =>
  db.selectFrom("events").select("id").where("payment_id", "=", paymentId).orderBy("id", "desc").limit(sql.lit(1)),
);

/** The id of the payment's newest event, read in the writer's transaction. */
export async function lastEventIdOfPayment(db: Db, paymentId: string): Promise<string | undefined> {
  return (await lastEventQuery(db, paymentId)).rows[0]?.id;
}

const insertEventsQuery = compiled((db, rows: Insertable<EventsTable>[]) => db.insertInto("events").values(rows));

export async function insertEvents(db: Db, rows: Insertable<EventsTable>[]): Promise<void> {
  await insertEventsQuery(db, rows);
}
