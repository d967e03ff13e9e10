import type { Trx } from "../../store/database";
import type { Mode } from "../connectors/connector";
import { isoNow, newEventId } from "../ids";
import { enqueueDeliveries } from "../webhooks/enqueue";
import type { Event, EventType } from "./event";

export interface EventInput {
  merchantId: string;
  mode: Mode;
  type: EventType;
  paymentId: string | null;
  data: Record<string, unknown>;
}

/**
 * Writes an event and its webhook deliveries inside the caller's transaction: they
 * commit with the state change that caused them, or not at all (the outbox).
 */
export async function recordEvent(trx: Trx, input: EventInput): Promise<Event> {
  const event: Event = {
    id: newEventId(),
    object: "event",
    type: input.type,
    created_at: isoNow(),
    test_mode: input.mode === "test",
    data: input.data,
  };
  await trx
    .insertInto("events")
    .values({
      id: event.id,
      merchant_id: input.merchantId,
      mode: input.mode,
      type: event.type,
      payment_id: input.paymentId,
      payload: JSON.stringify(event),
      created_at: event.created_at,
    })
    .execute();
  await enqueueDeliveries(trx, { id: event.id, merchantId: input.merchantId, mode: input.mode, type: event.type });
  return event;
}
