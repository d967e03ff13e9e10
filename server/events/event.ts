import type { EventRow } from "../../store/schema";

/** The five event types of the spec ("Events"). */
export const EVENT_TYPES = ["payment.authorized", "payment.captured", "payment.refunded", "payment.voided", "payment.failed"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event as delivered to receivers and listed by the API. */
export interface Event {
  id: string;
  object: "event";
  type: EventType;
  created_at: string;
  test_mode: boolean;
  /** The payment object as it was when the event happened. */
  data: Record<string, unknown>;
}

/** The stored payload is the exact JSON receivers get. */
export const toEvent = (row: EventRow): Event => JSON.parse(row.payload) as Event;
