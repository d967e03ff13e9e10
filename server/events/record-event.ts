import type { Trx } from "../../store/database";
import type { SettingsSource } from "../cache/settings-cache";
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
 * Writes events (one insert for all of them) and their webhook deliveries inside the
 * caller's transaction: they commit with the state change that caused them, or not at
 * all (the outbox).
 */
export async function recordEvents(app: { settings: SettingsSource }, trx: Trx, inputs: readonly EventInput[]): Promise<Event[]> {
  const createdAt = isoNow();
  const events = inputs.map(
    (input): Event => ({ id: newEventId(), object: "event", type: input.type, created_at: createdAt, test_mode: input.mode === "test", data: input.data }),
  );
  await trx
    .insertInto("events")
    .values(
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
    )
    .execute();
  await enqueueDeliveries(
    app,
    trx,
    inputs.map((input, i) => ({ id: (events[i] as Event).id, merchantId: input.merchantId, mode: input.mode, type: input.type })),
  );
  return events;
}
