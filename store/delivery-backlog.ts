import type { Db } from "./database";

export interface DeliveryBacklog {
  /** Deliveries that exhausted their retries (the dead-letter queue). */
  dead: number;
  /** Deliveries still to be sent, due or scheduled for a retry. */
  pending: number;
  /** Milliseconds since the oldest due delivery became due; 0 when nothing is due. */
  lagMs: number;
}

/** Read at scrape time, from the database every process shares: both use the (status, next_attempt_at) index. */
export async function deliveryBacklog(db: Db, now: number): Promise<DeliveryBacklog> {
  const counts = await db
    .selectFrom("webhook_deliveries")
    .select(["status", (eb) => eb.fn.countAll<number>().as("n")])
    .where("status", "in", ["pending", "dead"])
    .groupBy("status")
    .execute();
  const oldest = await db
    .selectFrom("webhook_deliveries")
    .select((eb) => eb.fn.min<number | null>("next_attempt_at").as("due"))
    .where("status", "=", "pending")
    .where("next_attempt_at", "<=", now)
    .executeTakeFirst();
  const count = (status: string) => Number(counts.find((row) => row.status === status)?.n ?? 0);
  const due = oldest?.due;
  return { dead: count("dead"), pending: count("pending"), lagMs: due === null || due === undefined ? 0 : now - Number(due) };
}
