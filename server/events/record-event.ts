import type { Trx } from "../../store/database";
import { lastEventIdOfPayment } from "../../store/events";
import type { Mode } from "../connectors/connector";
import { newEventId, sortableIdTime } from "../ids";
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
 * commit with the state change that caused them, or not at all (the outbox). A
 * payment's event sorts after the payment's previous one, read in this transaction
 * (its writer holds the payment's claim): another instance's counter or clock cannot
 * put a capture before its authorization. `created_at` is the id's time, so both orders agree.
 */
export async function recordEvent(trx: Trx, input: EventInput): Promise<Event> {
  const id = newEventId(input.paymentId === null ? undefined : await lastEventIdOfPayment(trx, input.paymentId));
  const event: Event = {
    id,
    object: "event",
    type: input.type,
    created_at: sortableIdTime("evt_", id),
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
