import type { Trx } from "../../store/database";
import { insertEvents, lastEventIdOfPayment } from "../../store/events";
import type { SettingsSource } from "../cache/settings-cache";
import type { Mode } from "../connectors/connector";
import { newEventId, sortableIdTime } from "../ids";
import { enqueueDeliveries } from "../webhooks/enqueue";
import type { Event, EventType } from "./event";

export interface EventInput {
  merchantId: string;
  mode: Mode;
  type: EventType;
  paymentId: string | null;
  /** The payment was inserted in this transaction: it has no earlier event to sort after. */
  newPayment?: true;
  data: Record<string, unknown>;
}

/**
 * Writes events (one insert for all of them) and their webhook deliveries inside the
 * caller's transaction: they commit with the state change that caused them, or not at
 * all (the outbox). A payment's events sort after the payment's previous one, read in
 * this transaction (its writer holds the payment's claim), and after each other in the
 * order given: another instance's counter or clock cannot put a capture before its
 * authorization. `created_at` is the id's time, so both orders agree.
 */
export async function recordEvents(app: { settings: SettingsSource }, trx: Trx, inputs: readonly EventInput[]): Promise<Event[]> {
  const previous = new Map<string, string | undefined>();
  const events: Event[] = [];
  for (const input of inputs) {
    let after: string | undefined;
    if (input.paymentId !== null) {
      if (previous.has(input.paymentId)) after = previous.get(input.paymentId);
      else if (!input.newPayment) after = await lastEventIdOfPayment(trx, input.paymentId);
    }
    const id = newEventId(after);
    if (input.paymentId !== null) previous.set(input.paymentId, id);
    events.push({ id, object: "event", type: input.type, created_at: sortableIdTime("evt_", id), test_mode: input.mode === "test", data: input.data });
  }
  await insertEvents(
    trx,
    inputs.map((input, i) => {
      const event = events[i] as Event;
      return {
        id: event.id,
        merchant_id: input.merchantId,
        mode: input.mode,
        type: event.type,
        payment_id: input.paymentId,
        payload: JSON.stringify(event),
        created_at: event.created_at,
      };
    }),
  );
  await enqueueDeliveries(
    app,
    trx,
    inputs.map((input, i) => ({ id: (events[i] as Event).id, merchantId: input.merchantId, mode: input.mode, type: input.type })),
  );
  return events;
}
