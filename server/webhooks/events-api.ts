import { z } from "zod";
import type { Db } from "../../store/database";
import { findOwnedEvent, listEvents as listEventRows, type Owner } from "../../store/events";
import type { EventRow, WebhookAttemptRow, WebhookDeliveryRow } from "../../store/schema";
import { attemptsOf, deliveriesOfEvent } from "../../store/webhooks";
import { ApiError, errors } from "../errors";
import { eventSchema, toEvent, type Event, type EventType } from "../events/event";
import { timestamp } from "../ids";
import { toPage, type ListPage, type ListParams } from "../pagination";

const attemptLogEntrySchema = z.object({
  attempted_at: timestamp,
  status_code: z.number().int().nullable(),
  duration_ms: z.number(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable(),
});
export type AttemptLogEntry = z.infer<typeof attemptLogEntrySchema>;

const deliveryDetailSchema = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  status: z.enum(["pending", "succeeded", "dead"]) satisfies z.ZodType<WebhookDeliveryRow["status"]>,
  attempts: z.number().int().meta({ description: "Attempts since the delivery was last queued (a replay starts a fresh schedule)." }),
  next_attempt_at: timestamp.nullable(),
  attempts_log: z.array(attemptLogEntrySchema).meta({ description: "Every attempt ever made, replays included, oldest first." }),
});
export type DeliveryDetail = z.infer<typeof deliveryDetailSchema>;

export const eventWithDeliveriesSchema = eventSchema.extend({ deliveries: z.array(deliveryDetailSchema) }).meta({ id: "EventWithDeliveries" });
export type EventWithDeliveries = z.infer<typeof eventWithDeliveriesSchema>;

const toAttemptLogEntry = (row: WebhookAttemptRow): AttemptLogEntry => ({
  attempted_at: row.attempted_at,
  status_code: row.status_code,
  duration_ms: row.duration_ms,
  error: row.error,
  response_excerpt: row.response_excerpt,
});

/** The owner's event, or 404: another merchant's or mode's event does not exist for the caller. */
export async function getEventRow(db: Db, owner: Owner, id: string): Promise<EventRow> {
  const row = await findOwnedEvent(db, owner, id);
  if (!row) throw errors.notFound("event_not_found", `No event ${id}.`, "id");
  return row;
}

export async function withDeliveries(db: Db, event: EventRow): Promise<EventWithDeliveries> {
  const deliveries = await deliveriesOfEvent(db, event.id);
  const attempts = await attemptsOf(db, deliveries.map((d) => d.id));
  return {
    ...toEvent(event),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      endpoint_id: d.endpoint_id,
      status: d.status,
      attempts: d.attempts,
      next_attempt_at: d.next_attempt_at === null ? null : new Date(d.next_attempt_at).toISOString(),
      attempts_log: attempts.filter((a) => a.delivery_id === d.id).map(toAttemptLogEntry),
    })),
  };
}

export async function listEvents(db: Db, owner: Owner, params: ListParams, type: EventType | undefined): Promise<ListPage<Event>> {
  const after = params.startingAfter === undefined ? undefined : await findOwnedEvent(db, owner, params.startingAfter);
  if (params.startingAfter !== undefined && !after) {
    throw new ApiError(400, "parameter_invalid", `starting_after: no event ${params.startingAfter}.`, { param: "starting_after" });
  }
  return toPage(await listEventRows(db, owner, params.limit, { after, type }), params.limit, toEvent);
}
