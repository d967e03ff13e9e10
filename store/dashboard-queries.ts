import type { Db } from "./database";
import type { Owner } from "./events";
import { olderThan, type Cursor } from "./keyset";
import type { EventRow, WebhookDeliveryRow } from "./schema";

/** A payment's events, oldest first: the dashboard's timeline. */
export async function eventsOfPayment(db: Db, owner: Owner, paymentId: string): Promise<EventRow[]> {
  return db
    .selectFrom("events")
    .selectAll()
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("payment_id", "=", paymentId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** A delivery of the owner's events, with what a listing shows of its event and endpoint. */
export interface OwnedDeliveryRow extends WebhookDeliveryRow {
  type: string;
  payment_id: string | null;
  endpoint_url: string;
}

/** Deliveries with their event and endpoint, owned through the event: another merchant's or mode's never shows. */
function ownedDeliveries(db: Db, owner: Owner) {
  return db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("events as ev", "ev.id", "d.event_id")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .selectAll("d")
    .select(["ev.type", "ev.payment_id", "e.url as endpoint_url"])
    .where("ev.merchant_id", "=", owner.merchantId)
    .where("ev.mode", "=", owner.mode);
}

/**
 * The owner's deliveries newest first (`limit + 1` rows for `has_more`), of one status
 * when given. Owned through the event: another merchant's or mode's never shows.
 */
export async function listOwnedDeliveries(
  db: Db,
  owner: Owner,
  options: { status?: WebhookDeliveryRow["status"] | undefined; limit: number; after?: Cursor | undefined },
): Promise<OwnedDeliveryRow[]> {
  let query = ownedDeliveries(db, owner);
  if (options.status) query = query.where("d.status", "=", options.status);
  if (options.after) query = query.where(olderThan(options.after, "d"));
  return query.orderBy("d.created_at", "desc").orderBy("d.id", "desc").limit(options.limit + 1).execute();
}

export async function findOwnedDelivery(db: Db, owner: Owner, id: string): Promise<OwnedDeliveryRow | undefined> {
  return ownedDeliveries(db, owner)
    .where("d.id", "=", id)
    .executeTakeFirst();
}

export async function countOwnedDeadDeliveries(db: Db, owner: Owner): Promise<number> {
  const row = await db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("events as ev", "ev.id", "d.event_id")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("ev.merchant_id", "=", owner.merchantId)
    .where("ev.mode", "=", owner.mode)
    .where("d.status", "=", "dead")
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Every payment of the owner created at or after `since` (ISO): its time, status and amount, for the overview. */
export async function paymentsSince(db: Db, owner: Owner, since: string): Promise<Array<{ created_at: string; status: string; amount: number; currency: string }>> {
  return db
    .selectFrom("payments")
    .select(["created_at", "status", "amount", "currency"])
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("created_at", ">=", since)
    .execute();
}
