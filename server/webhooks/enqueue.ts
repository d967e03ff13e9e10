import type { Trx } from "../../store/database";
import type { WebhookDeliveryRow } from "../../store/schema";
import { insertDeliveries, listReceivingEndpoints } from "../../store/webhooks";
import type { Mode } from "../connectors/connector";
import type { EventType } from "../events/event";
import { newDeliveryId } from "../ids";
import { subscribesTo } from "./endpoints";

export interface EnqueuedEvent {
  id: string;
  merchantId: string;
  mode: Mode;
  type: EventType;
}

/**
 * Fans an event out to the merchant's subscribed endpoints, in the event's transaction:
 * one pending delivery per endpoint, due now. The caller kicks delivery after commit;
 * until then (or if this process dies) the rows wait for the sweep.
 */
export async function enqueueDeliveries(trx: Trx, event: EnqueuedEvent): Promise<void> {
  const endpoints = await listReceivingEndpoints(trx, { merchantId: event.merchantId, mode: event.mode });
  const now = new Date();
  await insertDeliveries(
    trx,
    endpoints.filter((endpoint) => subscribesTo(endpoint, event.type)).map((endpoint) => newPendingDelivery(event.id, endpoint.id, now)),
  );
}

/** A delivery row that is due at once and has never been attempted. */
export function newPendingDelivery(eventId: string, endpointId: string, now: Date): WebhookDeliveryRow {
  return {
    id: newDeliveryId(),
    event_id: eventId,
    endpoint_id: endpointId,
    status: "pending",
    attempts: 0,
    next_attempt_at: now.getTime(),
    leased_until: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
}
