import type { Db } from "../../store/database";
import { findEvent, findOwnedEvent, type Owner } from "../../store/events";
import type { EventRow } from "../../store/schema";
import { deliveriesOfEvent, findDeadDeliveries, insertDeliveries, listReceivingEndpoints, requeueDeliveries } from "../../store/webhooks";
import type { AuditActor } from "../audit/audit-actor";
import { recordAudit } from "../audit/record-audit";
import { errors } from "../errors";
import { subscribesTo } from "./endpoints";
import { newPendingDelivery } from "./enqueue";

/**
 * What to send again: given events (to every endpoint subscribed now, whatever their
 * deliveries' state; `owner` restricts the look-up to one merchant and mode), or every
 * dead delivery, optionally only those dead-lettered at or after `since` (ISO time).
 * `endpointId` narrows an event replay to that one endpoint, which must receive the event.
 */
export type ReplaySelection = { eventIds: readonly string[]; owner?: Owner; endpointId?: string } | { dead: true; since?: string };

export interface ReplayedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
}

/**
 * Marks the selected deliveries pending and due now, with a fresh retry schedule. It
 * only writes: a serving process's dispatcher (kicked, or its sweep) sends them. Used
 * by the HTTP replay route and the CLI; run it in one transaction.
 */
export async function replayDeliveries(db: Db, selection: ReplaySelection, by: AuditActor): Promise<ReplayedDelivery[]> {
  const now = new Date();
  if ("dead" in selection) {
    const dead = await findDeadDeliveries(db, selection.since);
    await requeueDeliveries(db, dead.map((d) => d.id), now.getTime(), now.toISOString());
    await recordAudit(db, by, {
      action: "webhook.replayed",
      target: { type: "dead_letter_queue", id: "*" },
      merchantId: null,
      mode: null,
      details: { deliveries: dead.length, ...(selection.since !== undefined && { since: selection.since }) },
    });
    return dead.map((d) => ({ id: d.id, event_id: d.event_id, endpoint_id: d.endpoint_id }));
  }
  const replayed: ReplayedDelivery[] = [];
  for (const eventId of selection.eventIds) {
    const event = selection.owner ? await findOwnedEvent(db, selection.owner, eventId) : await findEvent(db, eventId);
    if (!event) throw errors.notFound("event_not_found", `No event ${eventId}.`, "id");
    const sent = await replayEvent(db, event, now, selection.endpointId);
    if (selection.endpointId !== undefined && sent.length === 0) {
      throw errors.notFound("webhook_endpoint_not_found", `No enabled webhook endpoint ${selection.endpointId} subscribed to ${event.type}.`, "endpoint");
    }
    await recordAudit(db, by, { action: "webhook.replayed", target: { type: "event", id: event.id }, merchantId: event.merchant_id, mode: event.mode, details: { mode: event.mode, deliveries: sent.length } });
    replayed.push(...sent);
  }
  return replayed;
}

/** Requeues the event's delivery to each endpoint subscribed now, creating it for endpoints added since. */
async function replayEvent(db: Db, event: EventRow, now: Date, endpointId?: string): Promise<ReplayedDelivery[]> {
  const endpoints = (await listReceivingEndpoints(db, { merchantId: event.merchant_id, mode: event.mode })).filter(
    (e) => subscribesTo(e, event.type) && (endpointId === undefined || e.id === endpointId),
  );
  const existing = new Map((await deliveriesOfEvent(db, event.id)).map((d) => [d.endpoint_id, d.id]));
  const fresh = endpoints.filter((e) => !existing.has(e.id)).map((e) => newPendingDelivery(event.id, e.id, now));
  const requeued = endpoints.filter((e) => existing.has(e.id)).map((e) => ({ id: existing.get(e.id) as string, event_id: event.id, endpoint_id: e.id }));
  await requeueDeliveries(db, requeued.map((d) => d.id), now.getTime(), now.toISOString());
  await insertDeliveries(db, fresh);
  return [...requeued, ...fresh.map((d) => ({ id: d.id, event_id: d.event_id, endpoint_id: d.endpoint_id }))];
}
