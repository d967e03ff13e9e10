import { readingPayments } from "./routes";
import { z } from "zod";
import type { AppContext } from "../app-context";
import { route, type Route } from "../http/route";
import { parse } from "../http/validate";
import { EVENT_TYPES, eventSchema } from "./event";
import { eventStream } from "./stream";

const EVENT_ID = /^evt_[0-9a-z]{24}$/;

/** The query as sent: `types` is one comma-separated string. */
const streamQuery = z.object({
  types: z.string().optional().meta({ description: "Only these event types, comma-separated; every type when absent." }),
});
const typeList = z.object({
  types: z.array(z.enum(EVENT_TYPES, { error: `types must be a comma-separated list of ${EVENT_TYPES.join(", ")}.` })),
});

const streamHeaders = z.object({
  "Last-Event-ID": z
    .string()
    .regex(EVENT_ID, { error: "Last-Event-ID must be an event id (evt_…)." })
    .optional()
    .meta({ description: "Resume after this event; without it the stream starts with events recorded from now on." }),
});

/**
 * `GET /v1/events/stream`: the key's merchant and mode's events as server-sent events,
 * resumable with `Last-Event-ID`. Secret keys only: events carry payment data.
 */
export function eventStreamRoutes(app: AppContext): Route[] {
  return [
    route({
      method: "GET",
      path: "/v1/events/stream",
      scope: "webhooks:read",
      summary: "Stream the merchant's events (in the key's mode) as server-sent events",
      query: streamQuery,
      headers: streamHeaders,
      responses: {
        200: {
          mediaType: "text/event-stream",
          description:
            "Server-sent events that last until the client leaves: one frame per event (`id:` the event id, `event:` its type, `data:` the event as JSON), and a `: keep-alive` comment when quiet.",
          itemSchema: eventSchema,
        },
      },
      handle: async (req) => {
        const typesText = parse(streamQuery, { types: req.query.get("types") ?? undefined }).types;
        const { types } = parse(typeList, { types: typesText ? typesText.split(",").map((t) => t.trim()) : [] });
        const after = parse(streamHeaders, { "Last-Event-ID": req.headers.get("last-event-id") ?? undefined })["Last-Event-ID"];
        const actor = readingPayments(req.actor);
        return eventStream(app.db, { owner: { merchantId: actor.merchantId, mode: actor.mode }, types, after });
      },
      present: (stream) => ({ status: 200, headers: { "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" }, stream }),
    }),
  ];
}
