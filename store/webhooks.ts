import { markSettingsChanged } from "./settings-changes";
import type { Insertable, Updateable } from "kysely";
import type { Db } from "./database";
import type { Owner } from "./events";
import { olderThan } from "./keyset";
import type {
  WebhookAttemptRow,
  WebhookDeliveriesTable,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from "./schema";

// ---- Endpoints (soft-deleted: deliveries keep referring to them) ----

export async function insertEndpoint(db: Db, row: Insertable<WebhookEndpointsTable>): Promise<void> {
  await db.insertInto("webhook_endpoints").values(row).execute();
  markSettingsChanged();
}

export async function findEndpoint(db: Db, owner: Owner, id: string): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("id", "=", id)
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

/** How many endpoints the owner has (enabled or disabled, not deleted). */
export async function countEndpoints(db: Db, owner: Owner): Promise<number> {
  const row = await db
    .selectFrom("webhook_endpoints")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Newest first, `limit + 1` rows so the caller can tell `has_more`. */
export async function listEndpoints(db: Db, owner: Owner, limit: number, after?: WebhookEndpointRow): Promise<WebhookEndpointRow[]> {
  let query = db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("deleted_at", "is", null)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1);
  if (after) {
    query = query.where(olderThan(after));
  }
  return query.execute();
}

/** The owner's endpoints that currently receive events: enabled and not deleted. */
export async function listReceivingEndpoints(db: Db, owner: Owner): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("merchant_id", "=", owner.merchantId)
    .where("mode", "=", owner.mode)
    .where("status", "=", "enabled")
    .where("deleted_at", "is", null)
    .execute();
}

export async function updateEndpoint(db: Db, id: string, update: Updateable<WebhookEndpointsTable>): Promise<void> {
  await db.updateTable("webhook_endpoints").set(update).where("id", "=", id).execute();
  markSettingsChanged();
}

// ---- Deliveries ----

export async function insertDeliveries(db: Db, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto("webhook_deliveries").values(rows).execute();
}

/** A due delivery, as much of it as choosing what to send needs. */
export interface DueCandidate {
  id: string;
  endpoint_id: string;
}

/** A leased delivery with everything needed to send it. */
export interface DueDelivery {
  id: string;
  attempts: number;
  event_id: string;
  endpoint_id: string;
  payload: string;
  url: string;
  mode: WebhookEndpointsTable["mode"];
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
}

/**
 * Pending deliveries whose time has come and that nobody holds a lease on, oldest due
 * first, to endpoints that still receive (enabled, not deleted), skipping `busyEndpoints`.
 * Only ids: the payloads are read for the deliveries actually leased.
 */
export async function findDueDeliveries(db: Db, now: number, busyEndpoints: readonly string[], limit: number): Promise<DueCandidate[]> {
  let query = db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .select(["d.id", "d.endpoint_id"])
    .where("d.status", "=", "pending")
    .where("d.next_attempt_at", "<=", now)
    .where((eb) => eb.or([eb("d.leased_until", "is", null), eb("d.leased_until", "<", now)]))
    .where("e.status", "=", "enabled")
    .where("e.deleted_at", "is", null)
    .orderBy("d.next_attempt_at")
    .limit(limit);
  if (busyEndpoints.length > 0) query = query.where("d.endpoint_id", "not in", busyEndpoints);
  return query.execute();
}

/**
 * Takes the lease on those of `ids` that are still due and unleased (compare-and-set),
 * so that no other sender, in this process or another, sends them until the lease is
 * released or expires; returns the leased ones with what sending needs.
 */
export async function leaseDeliveries(db: Db, ids: readonly string[], now: number, leasedUntil: number): Promise<DueDelivery[]> {
  const won: string[] = [];
  const due = db
    .updateTable("webhook_deliveries")
    .set({ leased_until: leasedUntil })
    .where("status", "=", "pending")
    .where("next_attempt_at", "<=", now)
    .where((eb) => eb.or([eb("leased_until", "is", null), eb("leased_until", "<", now)]));
  // One statement per row: with `id in (…)`, SQLite (no statistics) prefers the due
  // index to the primary key and scans every pending row.
  for (const id of ids) {
    const result = await due.where("id", "=", id).executeTakeFirst();
    if (result.numUpdatedRows === 1n) won.push(id);
  }
  if (won.length === 0) return [];
  return db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .innerJoin("events as ev", "ev.id", "d.event_id")
    .select([
      "d.id",
      "d.attempts",
      "d.event_id",
      "d.endpoint_id",
      "ev.payload",
      "e.url",
      "e.mode",
      "e.secret_encrypted",
      "e.previous_secret_encrypted",
      "e.previous_secret_expires_at",
    ])
    .where("d.id", "in", won)
    .execute();
}

/** One attempt's outcome for a delivery this sender leased. */
export interface LeasedOutcome {
  lease: { id: string; leasedUntil: number; attempts: number };
  attempt: WebhookAttemptRow;
  /** The delivery's new state; a pending one is due again `retryDelayMs` after it is written. */
  update: Pick<WebhookDeliveryRow, "status" | "attempts"> & { retryDelayMs: number | null };
}

/** Rows per statement, well below SQLite's and PostgreSQL's bound on parameters. */
const CHUNK = 500;

/**
 * Records the attempts and writes each outcome onto its delivery, unless the row
 * changed under the lease (a replay reset `attempts`): then only that lease is given
 * back and the replayed row is sent afresh. Outcomes that write the same values under
 * the same lease share one compare-and-set UPDATE, so a batch of deliveries costs a
 * few statements instead of two each. Returns, per outcome, whether it was applied.
 */
export async function settleLeasedDeliveries(db: Db, outcomes: readonly LeasedOutcome[], now: number): Promise<boolean[]> {
  for (let i = 0; i < outcomes.length; i += CHUNK) {
    await db
      .insertInto("webhook_attempts")
      .values(outcomes.slice(i, i + CHUNK).map((o) => o.attempt))
      .execute();
  }
  const groups = new Map<string, LeasedOutcome[]>();
  for (const outcome of outcomes) {
    const { lease, update } = outcome;
    const key = `${lease.leasedUntil} ${lease.attempts} ${update.status} ${update.attempts} ${update.retryDelayMs}`;
    const group = groups.get(key);
    if (group) group.push(outcome);
    else groups.set(key, [outcome]);
  }
  const applied = new Set<string>();
  const updatedAt = new Date(now).toISOString();
  for (const group of groups.values()) {
    const { lease, update } = group[0] as LeasedOutcome;
    const nextAttemptAt = update.retryDelayMs === null ? null : now + update.retryDelayMs;
    for (let i = 0; i < group.length; i += CHUNK) {
      // No index but the primary key serves these conditions, so `id in (…)` is looked up by it.
      const rows = await db
        .updateTable("webhook_deliveries")
        .set({ status: update.status, attempts: update.attempts, next_attempt_at: nextAttemptAt, updated_at: updatedAt, leased_until: null })
        .where("id", "in", group.slice(i, i + CHUNK).map((o) => o.lease.id))
        .where("leased_until", "=", lease.leasedUntil)
        .where("attempts", "=", lease.attempts)
        .returning("id")
        .execute();
      for (const row of rows) applied.add(row.id);
    }
  }
  const results: boolean[] = [];
  for (const { lease } of outcomes) {
    const ok = applied.has(lease.id);
    if (!ok) await releaseLease(db, lease.id, lease.leasedUntil);
    results.push(ok);
  }
  return results;
}

/** Gives a lease back without an outcome (a send cut short by shutdown). */
export async function releaseLease(db: Db, id: string, leasedUntil: number): Promise<void> {
  await db.updateTable("webhook_deliveries").set({ leased_until: null }).where("id", "=", id).where("leased_until", "=", leasedUntil).execute();
}

export async function deliveriesOfEvent(db: Db, eventId: string): Promise<WebhookDeliveryRow[]> {
  return db.selectFrom("webhook_deliveries").selectAll().where("event_id", "=", eventId).orderBy("created_at").orderBy("id").execute();
}

/** Every attempt of these deliveries, oldest first. */
export async function attemptsOf(db: Db, deliveryIds: readonly string[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom("webhook_attempts")
    .selectAll()
    .where("delivery_id", "in", deliveryIds)
    .orderBy("attempted_at")
    .orderBy("id")
    .execute();
}

/** Makes deliveries pending and due at `now` with a fresh retry schedule; leases are left to finish. */
export async function requeueDeliveries(db: Db, ids: readonly string[], now: number, nowIso: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "pending", attempts: 0, next_attempt_at: now, updated_at: nowIso })
    .where("id", "in", ids)
    .execute();
}

/**
 * Dead deliveries to endpoints that still receive, dead-lettered at or after `since`
 * (a dead row is not written again, so `updated_at` is when it died).
 */
export async function findDeadDeliveries(db: Db, since: string | undefined): Promise<WebhookDeliveryRow[]> {
  let query = db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .selectAll("d")
    .where("d.status", "=", "dead")
    .where("e.status", "=", "enabled")
    .where("e.deleted_at", "is", null);
  if (since !== undefined) query = query.where("d.updated_at", ">=", since);
  return query.orderBy("d.updated_at").execute();
}

/** Stops the pending deliveries of a deleted endpoint: they can never be sent. */
export async function killPendingDeliveries(db: Db, endpointId: string, nowIso: string): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ status: "dead", next_attempt_at: null, updated_at: nowIso })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "pending")
    .execute();
}

/** A delivery as the operator's listing shows it. */
export interface DeliveryListRow {
  id: string;
  event_id: string;
  type: string;
  endpoint_url: string;
  status: WebhookDeliveryRow["status"];
  attempts: number;
  next_attempt_at: number | null;
  created_at: string;
  merchant: string;
  /** Of the latest attempt: the receiver's status code, or why no answer came. */
  last_status_code: number | null;
  last_error: string | null;
}

/** Every merchant's deliveries, newest first; only dead ones with `deadOnly`. */
export async function listDeliveries(db: Db, options: { deadOnly: boolean; limit: number }): Promise<DeliveryListRow[]> {
  let query = db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("events as ev", "ev.id", "d.event_id")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .innerJoin("merchants as m", "m.id", "e.merchant_id")
    .select(["d.id", "d.event_id", "ev.type", "e.url as endpoint_url", "d.status", "d.attempts", "d.next_attempt_at", "d.created_at", "m.short_id as merchant"])
    .select((eb) => {
      const latest = () => eb.selectFrom("webhook_attempts as a").whereRef("a.delivery_id", "=", "d.id").orderBy("a.attempted_at", "desc").orderBy("a.id", "desc").limit(1);
      return [latest().select("a.status_code").as("last_status_code"), latest().select("a.error").as("last_error")];
    })
    .orderBy("d.created_at", "desc")
    .orderBy("d.id", "desc")
    .limit(options.limit);
  if (options.deadOnly) query = query.where("d.status", "=", "dead");
  return query.execute();
}
