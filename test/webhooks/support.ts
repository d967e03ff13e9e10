import { UNCACHED } from "../../server/cache/settings-cache";
import { recordEvents } from "../../server/events/record-event";
import type { Event, EventType } from "../../server/events/event";
import type { Mode } from "../../server/connectors/connector";
import { newUuid } from "../../server/ids";
import type { Db } from "../../store/database";
import type { TestServer } from "../support/harness";
import { auth } from "../support/seed";

/** A payment as the payments service would put in an event's `data`. */
export function paymentData(merchantId: string, mode: Mode, status = "succeeded"): Record<string, unknown> {
  return { id: newUuid(), object: "payment", merchant_id: merchantId, amount: 2500, currency: "usd", status, connector_id: "mock", test_mode: mode === "test" };
}

/** Writes an event through the real outbox (as a payment would), in its own transaction. */
export function writeEvent(db: Db, merchantId: string, type: EventType, mode: Mode = "test"): Promise<Event> {
  return db.transaction().execute(async (trx) => {
    const [event] = await recordEvents({ settings: UNCACHED }, trx, [{ merchantId, mode, type, paymentId: null, data: paymentData(merchantId, mode) }]);
    return event as Event;
  });
}

/** `writeEvent` on a running server, then the kick a payment route gives after its commit. */
export async function emitEvent(server: TestServer, merchantId: string, type: EventType, mode: Mode = "test"): Promise<Event> {
  const event = await writeEvent(server.app.db, merchantId, type, mode);
  server.app.webhooks.kick();
  return event;
}

export interface CreatedEndpoint {
  id: string;
  secret: string;
  url: string;
  event_types: string[];
  status: string;
}

export async function createEndpoint(server: TestServer, key: string, body: Record<string, unknown>): Promise<CreatedEndpoint> {
  const res = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(key), json: body });
  if (res.status !== 201) throw new Error(`endpoint not created: ${res.status} ${await res.text()}`);
  return (await res.json()) as CreatedEndpoint;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface AttemptSeen {
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
}

/** The attempts made for an event's delivery to one endpoint, once there are any (5 s at most). */
export async function firstAttempts(server: TestServer, eventId: string, endpointId: string): Promise<AttemptSeen[]> {
  let attempts: AttemptSeen[] = [];
  for (let i = 0; i < 50 && attempts.length === 0; i++) {
    await sleep(100);
    attempts = await server.app.db
      .selectFrom("webhook_attempts")
      .innerJoin("webhook_deliveries", "webhook_deliveries.id", "webhook_attempts.delivery_id")
      .select(["webhook_attempts.status_code", "webhook_attempts.error", "webhook_attempts.response_excerpt"])
      .where("webhook_deliveries.event_id", "=", eventId)
      .where("webhook_deliveries.endpoint_id", "=", endpointId)
      .execute();
  }
  return attempts;
}
