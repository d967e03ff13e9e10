import { z } from "zod";
import type { Owner } from "../../store/events";
import type { AppContext } from "../app-context";
import { EVENT_TYPES, type Event, type EventType } from "../events/event";
import { isoNow, newEventId, newUuid } from "../ids";
import { getEndpointRow, type Subscription } from "./endpoints";
import { postWebhook } from "./send";
import { webhookHeaders } from "./signature";
import { signingSecrets } from "./signing-secrets";

export const testDeliveryResultSchema = z.object({
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number(),
  event_id: z.string(),
  error: z.string().nullable().meta({ description: "Why the attempt failed (refused target, timeout, connection error); null when an answer came." }),
}).meta({ id: "TestDeliveryResult" });
export type TestDeliveryResult = z.infer<typeof testDeliveryResultSchema>;

const SAMPLE_STATUS: Record<EventType, string> = {
  "payment.authorized": "authorized",
  "payment.captured": "succeeded",
  "payment.refunded": "refunded",
  "payment.voided": "voided",
  "payment.failed": "failed",
};

/** An event shaped exactly like a real one, about a payment that does not exist. */
function sampleEvent(type: EventType, owner: Owner): Event {
  return {
    id: newEventId(),
    object: "event",
    type,
    created_at: isoNow(),
    test_mode: owner.mode === "test",
    data: {
      id: newUuid(),
      object: "payment",
      merchant_id: owner.merchantId,
      amount: 1000,
      currency: "usd",
      status: SAMPLE_STATUS[type],
      connector_id: "mock",
      test_mode: owner.mode === "test",
    },
  };
}

/**
 * Sends one sample event to an endpoint now, signed like any delivery, and reports
 * what happened. Nothing is stored and nothing is retried. Default type: the
 * endpoint's first subscribed type.
 */
export async function sendTestDelivery(app: AppContext, owner: Owner, endpointId: string, type?: EventType): Promise<TestDeliveryResult> {
  const endpoint = await getEndpointRow(app.db, owner, endpointId);
  const subscribed = (JSON.parse(endpoint.event_types) as Subscription[]).find((s): s is EventType => s !== "*");
  const event = sampleEvent(type ?? subscribed ?? EVENT_TYPES[0], owner);
  const body = JSON.stringify(event);
  const now = new Date();
  const headers = webhookHeaders(signingSecrets(app.cipher, endpoint.id, endpoint, now.toISOString()), body, event.id, now);
  // Its own connection, opened under the rules as they stand now.
  const outcome = await postWebhook({ url: endpoint.url, mode: endpoint.mode, rules: await app.targets.current(), body, headers }, app.config.webhookTimeoutMs);
  return { delivered: outcome.delivered, status_code: outcome.statusCode, duration_ms: outcome.durationMs, event_id: event.id, error: outcome.error };
}
