import type { Trx } from "../../store/database";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "../../store/schema";
import { insertDeliveries, listReceivingEndpoints } from "../../store/webhooks";
import type { SettingsSource } from "../cache/settings-cache";
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
 * Fans events out to their merchant's subscribed endpoints, in the events'
 * transaction: one pending delivery per endpoint, due now, all in one insert, none
 * when no endpoint subscribes. The endpoints come from the settings cache (read
 * inside the transaction, so a change committed by another process is seen). The
 * caller kicks delivery after commit; until then (or if this process dies) the rows
 * wait for the sweep.
 */
export async function enqueueDeliveries(app: { settings: SettingsSource }, trx: Trx, events: readonly EnqueuedEvent[]): Promise<void> {
  const now = new Date();
  const rows: WebhookDeliveryRow[] = [];
  for (const event of events) {
    const endpoints = await receivingEndpoints(app, trx, event.merchantId, event.mode);
    for (const endpoint of endpoints) if (subscribesTo(endpoint, event.type)) rows.push(newPendingDelivery(event.id, endpoint.id, now));
  }
  await insertDeliveries(trx, rows);
}

function receivingEndpoints(app: { settings: SettingsSource }, trx: Trx, merchantId: string, mode: Mode): Promise<WebhookEndpointRow[]> {
  return app.settings.get(`endpoints:${merchantId}:${mode}`, () => listReceivingEndpoints(trx, { merchantId, mode }));
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
