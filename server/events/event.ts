import { z } from "zod";
import { timestamp } from "../ids";
import type { EventRow } from "../../store/schema";

/** The five event types of the spec ("Events"). */
export const EVENT_TYPES = ["payment.authorized", "payment.captured", "payment.refunded", "payment.voided", "payment.failed"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event as delivered to receivers and listed by the API. */
export const eventSchema = z.object({
  id: z.string(),
  object: z.literal("event"),
  type: z.enum(EVENT_TYPES),
  created_at: timestamp,
  test_mode: z.boolean(),
  data: z.record(z.string(), z.unknown()).meta({ description: "The payment object as it was when the event happened." }),
}).meta({ id: "Event" });
export type Event = z.infer<typeof eventSchema>;

/** The stored payload is the exact JSON receivers get. */
export const toEvent = (row: EventRow): Event => JSON.parse(row.payload) as Event;
